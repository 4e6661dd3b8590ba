// make web: copy the pinned @viz-js/viz's viz-global.js (Graphviz compiled
// to WebAssembly, the wasm inlined) into the web view's embedded assets,
// and record in assets.sum which package it came from (the version and
// tarball integrity package-lock.json pins) and the file's SHA-512.
// internal/web's TestWebVizAssetIsThePinnedOne checks all three.
import { createHash } from "node:crypto";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";

const pkg = "@viz-js/viz";
const file = "dist/viz-global.js";
const lock = JSON.parse(readFileSync("package-lock.json", "utf8")).packages["node_modules/" + pkg];
const installed = JSON.parse(readFileSync("node_modules/" + pkg + "/package.json", "utf8"));
if (installed.version !== lock.version) {
  throw new Error(`node_modules has ${pkg} ${installed.version}, package-lock.json pins ${lock.version}: run npm ci`);
}
const dest = "../internal/web/assets/viz-global.js";
copyFileSync("node_modules/" + pkg + "/" + file, dest);
const sum = "sha512-" + createHash("sha512").update(readFileSync(dest)).digest("base64");
writeFileSync("assets.sum", `${pkg} ${lock.version} ${lock.integrity} ${file} ${sum}\n`);
console.log(`internal/web/assets/viz-global.js: ${pkg} ${lock.version} ${sum}`);
