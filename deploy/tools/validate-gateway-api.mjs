// Validates Gateway API v1 objects (a JSON array on stdin) against their schemas from
// @kubernetes-models/gateway-api; prints one line per object that breaks them.
// Run by deploy/lint.py from the folder holding node_modules.
import * as v1 from "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1";

let input = "";
for await (const chunk of process.stdin) input += chunk;
let failed = false;
for (const object of JSON.parse(input)) {
  const name = `${object.kind} ${object.metadata?.name}`;
  const Model = v1[object.kind];
  try {
    if (!Model) throw new Error(`no schema for ${object.apiVersion} ${object.kind}`);
    new Model(object).validate();
  } catch (error) {
    console.log(`${name}: ${error.message}`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
