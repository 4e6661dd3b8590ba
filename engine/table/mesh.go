package table

// MeshService marks a GatewayTable that serves a Service's frontend for
// routes whose parentRef is that Service (GEP-1426, the mesh): its Address
// stands in for the Service's ClusterIP, its ports are the Service's ports.
type MeshService struct {
	// Service is the Service whose frontend this is.
	Service ObjectKey `json:"service"`
	// ClientNamespace is "" for the address every client uses, or the
	// namespace whose consumer routes this address applies: clients in that
	// namespace use this address instead (one address per namespace with
	// consumer routes for the Service).
	ClientNamespace string `json:"clientNamespace,omitempty"`
}
