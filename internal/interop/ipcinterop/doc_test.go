// Package ipcinterop checks that the stock Go HDFS client
// (github.com/colinmarc/hdfs/v2) talks to our ipc.Server: its frames decode
// on our server and our answers decode in it. It holds tests only.
package ipcinterop
