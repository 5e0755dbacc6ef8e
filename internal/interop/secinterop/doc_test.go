// Package secinterop tests HDFS security against stock clients: block
// access tokens with an in-process cluster, the stock Go client and raw
// DataTransferProtocol ops carrying forged, expired and misapplied tokens.
package secinterop
