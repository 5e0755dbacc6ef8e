// Package cli is the command line of the hdfs binary. It mirrors Apache Hadoop's
// hdfs script:
//
//	hdfs [--config CONFDIR] [--loglevel LEVEL] SUBCOMMAND [GENERIC OPTIONS] [ARGS]
//
// where the generic options are -D key=value (repeatable) and -fs hdfs://host:port.
// Main parses the shared part (global and generic options, configuration loading)
// and hands the rest to one subcommand. Each command family lives in its own file.
//
// Main is the only entry point; cmd/hdfs calls it with os.Args. It is safe to call
// from tests: all I/O goes through the Env passed to Run.
package cli
