package engine

import (
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine/table"
)

// The routing table is package table (engine/table): plain data without
// the Gateway API types, which the emulator imports without importing the
// engine. These aliases keep the engine's names for it.
type (
	// Table is table.Table.
	Table = table.Table
	// GatewayTable is table.GatewayTable.
	GatewayTable = table.GatewayTable
	// PortTable is table.PortTable.
	PortTable = table.PortTable
	// ListenerTable is table.ListenerTable.
	ListenerTable = table.ListenerTable
	// ListenerTLS is table.ListenerTLS.
	ListenerTLS = table.ListenerTLS
	// Certificate is table.Certificate.
	Certificate = table.Certificate
	// VirtualHost is table.VirtualHost.
	VirtualHost = table.VirtualHost
	// RouteRule is table.RouteRule.
	RouteRule = table.RouteRule
	// SNIRoute is table.SNIRoute.
	SNIRoute = table.SNIRoute
	// StreamRoute is table.StreamRoute.
	StreamRoute = table.StreamRoute
	// Backend is table.Backend.
	Backend = table.Backend
	// Target is table.Target.
	Target = table.Target
	// BackendTLS is table.BackendTLS.
	BackendTLS = table.BackendTLS
	// ListenerPolicy is table.ListenerPolicy.
	ListenerPolicy = table.ListenerPolicy
	// RBAC is table.RBAC.
	RBAC = table.RBAC
	// RBACGroup is table.RBACGroup.
	RBACGroup = table.RBACGroup
	// RBACPrincipal is table.RBACPrincipal.
	RBACPrincipal = table.RBACPrincipal
	// RBACHeaderMatch is table.RBACHeaderMatch.
	RBACHeaderMatch = table.RBACHeaderMatch
	// RulePolicy is table.RulePolicy.
	RulePolicy = table.RulePolicy
	// AccessLogPolicy is table.AccessLogPolicy.
	AccessLogPolicy = table.AccessLogPolicy
	// LogDiscardRule is table.LogDiscardRule.
	LogDiscardRule = table.LogDiscardRule
	// ExternalAuth is table.ExternalAuth.
	ExternalAuth = table.ExternalAuth
	// TLSLimits is table.TLSLimits.
	TLSLimits = table.TLSLimits
)

// Target kinds and RBAC actions (see package table).
const (
	TargetMapped        = table.TargetMapped
	TargetEndpointSlice = table.TargetEndpointSlice
	TargetExternalName  = table.TargetExternalName
	TargetEcho          = table.TargetEcho
	RBACAllow           = table.RBACAllow
	RBACDeny            = table.RBACDeny
)

// transportOf maps a listener protocol to "TCP" or "UDP".
func transportOf(p gwv1.ProtocolType) string { return table.Transport(table.ProtocolType(p)) }
