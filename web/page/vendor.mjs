// Bundles the runtime modules the page imports (of the packages in package.json's
// "dependencies", as npm ci installed them from package-lock.json) into one ES module,
// web/static/vendor/bundle.js, where the web service serves it. Every specifier of the
// page's import map (web/static/index.html) names that one file: a page then loads one
// file for its packages, not their 160 modules one request at a time (half the browser's
// CPU for a page load). Run after `npm ci` here (`make setup` does both); web/static/vendor
// is not checked in.
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const vendor = join(here, "..", "static", "vendor");
const BUNDLE = "/static/vendor/bundle.js";

const page = readFileSync(join(here, "..", "static", "index.html"), "utf8");
const { imports } = JSON.parse(page.match(/<script type="importmap">(.*?)<\/script>/s)[1]);
const elsewhere = Object.entries(imports).filter(([, url]) => url !== BUNDLE);
if (elsewhere.length) throw new Error(`the import map must name ${BUNDLE}: ${elsewhere}`);

// One module exporting what every specifier exports. A name two of them export differently
// would be dropped by `export *`: refused here rather than missing in the page.
const specifiers = Object.keys(imports);
const owner = new Map(); // each exported name: the first specifier exporting it, its value
for (const specifier of specifiers) {
  for (const [name, value] of Object.entries(await import(specifier))) {
    const first = owner.get(name);
    if (first && first.value !== value) {
      throw new Error(`${specifier} and ${first.specifier} both export ${name}`);
    }
    if (!first) owner.set(name, { specifier, value });
  }
}

rmSync(vendor, { recursive: true, force: true });
mkdirSync(vendor, { recursive: true });
buildSync({
  stdin: {
    contents: specifiers.map((specifier) => `export * from ${JSON.stringify(specifier)};`).join("\n"),
    resolveDir: here,
  },
  bundle: true,
  format: "esm",
  outfile: join(vendor, "bundle.js"),
  logLevel: "error",
});
console.log(`vendor: ${specifiers.join(", ")} bundled into web/static/vendor/bundle.js`);
