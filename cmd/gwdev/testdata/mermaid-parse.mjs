// Parses Mermaid files with Mermaid's own parser (mermaid.parse), under a
// jsdom window. Used by TestGraphMermaidParsesWithMermaid when
// GWDEV_MERMAID_NODE_MODULES names a node_modules folder holding the
// mermaid and jsdom packages (npm install mermaid jsdom).
import fs from 'fs';
import path from 'path';
import { pathToFileURL } from 'url';

const modules = process.env.GWDEV_MERMAID_NODE_MODULES;
const load = async (name) => {
  const pkg = JSON.parse(fs.readFileSync(path.join(modules, name, 'package.json'), 'utf8'));
  const entry = pkg.exports?.['.']?.import?.default ?? pkg.exports?.['.']?.import ?? pkg.module ?? pkg.main;
  return import(pathToFileURL(path.join(modules, name, typeof entry === 'string' ? entry : 'index.js')).href);
};
const { JSDOM } = await load('jsdom').catch(() => import(pathToFileURL(path.join(modules, 'jsdom', 'lib', 'api.js')).href));
const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const mermaid = (await load('mermaid')).default;
let bad = 0;
for (const f of process.argv.slice(2)) {
  try {
    const r = await mermaid.parse(fs.readFileSync(f, 'utf8'));
    console.log('ok', f, r.diagramType);
  } catch (e) {
    console.log('error', f, e.message);
    bad++;
  }
}
process.exit(bad ? 1 : 0);
