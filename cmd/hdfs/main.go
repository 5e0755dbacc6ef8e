// Command hdfs is the single hdfsgo binary: every role and tool is a subcommand,
// as in Apache Hadoop's hdfs script. See internal/cli.
package main

import (
	"os"

	"github.com/hdfsgo/hdfsgo/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args))
}
