// Package nninterop drives a real hdfsgo NameNode with the stock Go HDFS client
// (github.com/colinmarc/hdfs/v2) and checks that results and error values are
// what that client expects from Apache HDFS.
package nninterop
