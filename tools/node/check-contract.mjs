// Check the wire contract with tools nobody at portgate wrote (run by tests/wire/test_contract_tools.py):
//   node check-contract.mjs <asyncapi.yaml> <schema.json>...
// Prints one JSON object: {"asyncapi": {"errors": [...], "warnings": n}, "ajv": {"<file>": null | "<errors>"}}.
// The AsyncAPI document goes through the official parser (@asyncapi/parser, its default rules);
// each JSON Schema is compiled by ajv in strict mode (draft 2020-12, formats from ajv-formats).
import { readFileSync } from "node:fs";
import { Parser } from "@asyncapi/parser";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const [docPath, ...schemaPaths] = process.argv.slice(2);
const out = { asyncapi: null, ajv: {} };

const parser = new Parser();
const { document, diagnostics } = await parser.parse(readFileSync(docPath, "utf8"));
out.asyncapi = {
  parsed: document !== undefined,
  errors: diagnostics.filter((d) => d.severity === 0).map((d) => `${d.code}: ${d.message} at ${d.path.join("/")}`),
  warnings: diagnostics.filter((d) => d.severity === 1).map((d) => `${d.code}: ${d.message} at ${d.path.join("/")}`),
};

for (const path of schemaPaths) {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  try {
    ajv.compile(JSON.parse(readFileSync(path, "utf8")));
    out.ajv[path] = null;
  } catch (err) {
    out.ajv[path] = String(err.message || err);
  }
}
console.log(JSON.stringify(out));
