// The gwdev extension: starts `gwdev lsp` for YAML files and hands it to
// vscode-languageclient, which speaks the protocol (pull diagnostics
// included). Everything else is the server's.
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const cfg = vscode.workspace.getConfiguration('gwdev');
  const command = cfg.get('path', 'gwdev');
  const args = ['lsp', ...cfg.get('args', [])];
  client = new LanguageClient(
    'gwdev',
    'gwdev',
    { command, args },
    { documentSelector: [{ scheme: 'file', language: 'yaml' }, { scheme: 'file', language: 'json' }] },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
