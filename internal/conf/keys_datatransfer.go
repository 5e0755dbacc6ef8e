package conf

// Protected data transfer (the SASL handshake of DataTransferProtocol).
const (
	DFSDataTransferProtection             = "dfs.data.transfer.protection"                   // unset: none
	DFSEncryptDataTransfer                = "dfs.encrypt.data.transfer"                      // false
	DFSEncryptDataTransferAlgorithm       = "dfs.encrypt.data.transfer.algorithm"            // unset
	DFSEncryptDataTransferCipherSuites    = "dfs.encrypt.data.transfer.cipher.suites"        // unset
	DFSEncryptDataTransferCipherKeyBitlen = "dfs.encrypt.data.transfer.cipher.key.bitlength" // 128
	IgnoreSecurePortsForTesting           = "ignore.secure.ports.for.testing"                // false
)

func dataTransferTable() []keyDef {
	return []keyDef{
		{DFSDataTransferProtection, "", 0},
		{DFSEncryptDataTransfer, "false", 0},
		{DFSEncryptDataTransferCipherKeyBitlen, "128", 0},
		{IgnoreSecurePortsForTesting, "false", 0},
	}
}
