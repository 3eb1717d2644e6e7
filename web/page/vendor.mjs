// Copies the runtime modules the page imports (the ES module builds of the packages in
// package.json's "dependencies", as npm ci installed them from package-lock.json) to
// web/static/vendor/<package>/, where the web service serves them and index.html's import
// map points. Run after `npm ci` here (`make setup` does both); web/static/vendor is not
// checked in.
import { cpSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const vendor = join(here, "..", "static", "vendor");
const { dependencies } = JSON.parse(readFileSync(join(here, "package.json"), "utf8"));

rmSync(vendor, { recursive: true, force: true });
for (const name of Object.keys(dependencies)) {
  const esm = join(here, "node_modules", name, "dist", "esm");
  cpSync(esm, join(vendor, name), { recursive: true, filter: (path) => !path.endsWith(".d.ts") });
}
console.log(`vendor: ${Object.keys(dependencies).join(", ")} copied to web/static/vendor`);
