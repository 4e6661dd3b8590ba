// Package gwin is the gwin implementation profile: the Yandex Cloud gateway
// (Application Load Balancer) as gwdev emulates it for Gateways of the
// class gwin-default (or a class mapped to it). It is a plug-in of the
// engine: its init function registers [Profile] with
// engine.RegisterProfile, and the engine calls the hooks of the run it
// starts per translation with views of the objects (engine.GatewayView,
// engine.RouteView, ...), never with the translator.
//
// Files: gwin.go (the profile, its features and object checks),
// schema.go and settings.go (the gwin.yandex.cloud/* settings: their
// schema, parsing and merging), policies.go (GatewayPolicy,
// ListenerSetPolicy, RoutePolicy, ServicePolicy: [Profile.PolicyKinds], targets
// and status), addresses.go (spec.addresses and YCCertificate), options.go
// (the profile's Options: local YCCertificate PEM files), table.go
// (what the profile adds to the routing table: RBAC, listener settings,
// access-log discard rules, backend timeouts). docs/gwin.md is the user's
// guide.
package gwin
