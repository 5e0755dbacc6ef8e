// Package e2e runs hdfsgo as a real deployment: the built hdfs binary as
// separate NameNode and DataNode processes configured only by XML files, driven
// by our CLI, by the stock Go HDFS client (github.com/colinmarc/hdfs/v2) and by
// Debian's hdfs-cli. Processes are killed with SIGKILL in the failure tests.
package e2e
