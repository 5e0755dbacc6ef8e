// Package web owns the HTTP side of the hdfsgo daemons: listening on the
// web port and shutting down, a registry of JMX-style beans served at /jmx
// in Hadoop's JSON format, the running configuration at /conf, a goroutine
// dump at /stacks, the route to a role's WebHDFS handler (SetWebHDFS; a
// "not supported" answer until one is set), and a small
// renderer for the roles' HTML status pages.
//
// Callers: the NameNode (dfs.namenode.http-address, 9870) and the DataNode
// (dfs.datanode.http.address, 9864) each build one Server, register their
// beans and role pages (/isActive, /{$}, ...), and Start it; they Close it
// when they stop. The package imports internal/conf, internal/ratelog and
// the standard library only, never a role package.
//
// Concurrency: a Server is safe for concurrent use. AddBean and Handle may
// be called at any time, usually before Start. Start runs one serving
// goroutine, owned by the Server and ended by Close; Close waits for it.
// Bean.Attrs functions are called from request goroutines, possibly many
// at once. RenderPage may be called from any handler.
//
// # Example
//
//	s, err := web.New(web.Config{
//		Addr:    "0.0.0.0:9870",
//		Role:    "NameNode",
//		KeyName: "dfs.namenode.http-address",
//		Conf:    c,
//		Logger:  logger,
//	})
//	if err != nil {
//		return err // web: listen on 0.0.0.0:9870 (dfs.namenode.http-address): ...
//	}
//	s.AddBean(web.Bean{
//		Name:        "Hadoop:service=NameNode,name=FSNamesystem",
//		ModelerType: "FSNamesystem",
//		Attrs: func() []web.Attr {
//			return []web.Attr{{Name: "CapacityTotal", Value: ns.CapacityTotal()}}
//		},
//	})
//	s.Handle("GET /{$}", statusPage)
//	s.Start()
//	defer s.Close(ctx)
//
// # Endpoints
//
//	GET /jmx                          every bean
//	GET /jmx?qry=Hadoop:service=NameNode,*    beans matching an ObjectName pattern
//	GET /jmx?get=BEAN::ATTRIBUTE      one attribute of one bean
//	GET /jmx?...&callback=NAME        the same as JSONP: NAME({...}); (a JavaScript identifier)
//	GET /logLevel?log=NAME[&level=L]  read or set the daemon's log level (Config.LogLevel)
//	GET /logs/                        Config.LogDir, read-only; without one a 404 saying so
//	GET /prom                         every bean's numeric attributes in Prometheus text
//	                                  (only with hadoop.prometheus.endpoint.enabled=true)
//	GET /conf[?format=xml|json][&name=KEY]
//	GET /stacks                       text dump of all goroutines (cut at MaxStacksBytes)
//	ANY /webhdfs/v1/...               the role's SetWebHDFS handler; without one
//	                                  501, RemoteException UnsupportedOperationException
//
// Every response carries X-Content-Type-Options: nosniff and
// X-Frame-Options: SAMEORIGIN.
//
// # Authentication
//
// Config.Auth, when set, wraps every endpoint: the role's HTTP
// authentication (SPNEGO with Kerberos, internal/security/spnego), which
// answers 401 itself or passes the request on with the user in its context
// (WithRemoteUser); RemoteUser, which the administrators' check uses, then
// answers that user instead of user.name.
//
// # Limits
//
// Config.Limits (LimitsFrom reads Hadoop's keys) bound what clients can
// make a server hold; a client within them never notices them:
//   - connections: at most MaxConnections (4096) open; the next one is
//     answered "HTTP/1.1 503 Service Unavailable" with the text
//     "web: too many connections (limit N); try again later" and closed at
//     accept (a WARN is logged, rate-limited);
//   - requests at once: MaxRequests (hadoop.http.max.threads; Hadoop's -1
//     means 250) over the server, MaxEndpointRequests (64) per registered
//     pattern, MaxStacks (2) for /stacks. Over a bound the answer is 503 at
//     once, "web: too many concurrent <what> (limit N); try again later",
//     with Retry-After: 1 and Connection: close;
//   - time: the request line and headers must arrive within HeaderTimeout
//     (10 s); a keep-alive connection idle for IdleTimeout
//     (hadoop.http.idle_timeout.ms, 60 s) is closed; a write of an answer,
//     or a read of a request body, that makes no progress for IdleTimeout
//     closes the connection (the built-in endpoints must write their whole
//     answer within IdleTimeout); there is no bound on the total time of a
//     request that keeps moving;
//   - size: request headers over MaxHeaderBytes
//     (hadoop.http.max.request.header.size, 64 KiB) get 431; a /stacks dump
//     is cut at MaxStacksBytes (8 MiB) with a last line
//     "... dump cut at N bytes (the limit); M goroutines in all".
//
// So 2,000 clients that ask for /stacks and read nothing cost a bounded
// amount: two dumps at a time, the others answered 503 and disconnected,
// and every connection gone within IdleTimeout.
//
// # /jmx format
//
// The document is JSON indented by two spaces, Content-Type
// "application/json; charset=utf8". Beans come in registration order; each
// starts with "name" and "modelerType", then its attributes in the order
// Attrs returned them. An attribute whose Value is []Attr is an object with
// its keys in that order; map[string]any is an object with sorted keys;
// NaN and infinities are the strings "NaN", "Infinity", "-Infinity".
//
//	{
//	  "beans": [
//	    {
//	      "name": "Hadoop:service=NameNode,name=FSNamesystem",
//	      "modelerType": "FSNamesystem",
//	      "CapacityTotal": 107374182400,
//	      "tag.HAState": "active",
//	      "Storage": {
//	        "DISK": 3,
//	        "SSD": 1
//	      }
//	    }
//	  ]
//	}
//
// Errors are an object of their own, with status 400 (malformed qry or
// get) or 404 (no such bean or attribute):
//
//	{
//	  "result": "ERROR",
//	  "message": "web: malformed ObjectName \"Hadoop\": no colon between domain and key properties"
//	}
//
// A qry that matches nothing is 200 with "beans": [].
//
// # ObjectName patterns
//
//	pattern  = domain ":" props
//	domain   = any text without ':'; '*' and '?' are wildcards
//	props    = elem *("," elem)
//	elem     = key "=" value | "*"
//	key      = non-empty, no  * ? : = , " newline
//	value    = non-empty, no  = , " newline; '*' and '?' are wildcards
//
// Without a "*" element a bean must have exactly the keys named; with it,
// other keys are allowed. Property order does not matter. "*:*" (also what
// an empty qry means) matches every bean. Quoted values are not supported.
// Bean names given to AddBean follow the same grammar without wildcards.
//
// # /conf format
//
// XML by default, as Hadoop's Configuration.writeXml prints it (keys
// sorted, values expanded, source = the file, "-D" or "default"):
//
//	<?xml version="1.0" encoding="UTF-8" standalone="no"?><configuration>
//	<property><name>dfs.replication</name><value>3</value><final>false</final>
//	<source>/etc/hadoop/hdfs-site.xml</source></property>...</configuration>
//
// (one line on the wire), or JSON as Configuration.dumpConfiguration prints
// it:
//
//	{"properties":[{"key":"dfs.replication","value":"3","isFinal":false,
//	"resource":"/etc/hadoop/hdfs-site.xml"},...]}
//
// With ?name=KEY the XML holds that one property and the JSON is
// {"property":{...}}; an unset KEY is 404, a format other than xml or json
// 400. Values of keys matching hadoop.security.sensitive-config-keys
// (Hadoop's default list when unset) are replaced by "******".
package web
