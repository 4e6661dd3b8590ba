// Package auth holds the data plane's decisions on who may pass, as pure
// functions of a request and the table: htpasswd hashes (HTTP basic
// authentication, from ingress-nginx's auth-type basic) and RBAC policies
// (from an implementation profile such as gwin). The emulator's exchange
// asks them and writes the answer (401, 403) and the trace lines itself
// (emulator/auth.go); ExternalAuth, which calls a service, and client
// certificates, which live on the connection, stay with the proxy.
package auth
