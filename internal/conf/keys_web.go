package conf

// Keys of the daemons' web endpoints (package web).
const (
	// HadoopPrometheusEndpointEnabled turns on /prom, the Prometheus text
	// form of every /jmx bean (false).
	HadoopPrometheusEndpointEnabled = "hadoop.prometheus.endpoint.enabled" // false
)
