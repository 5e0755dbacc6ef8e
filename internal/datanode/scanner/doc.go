// Package scanner holds the DataNode's two background checks of its disks:
// the block scanner, which reads every finalized replica and verifies its
// checksums so that silent corruption is found before a reader needs the
// data, and the directory scanner, which reconciles the replica map with
// the files the volumes actually hold. Both drive package storage, which
// owns every replica transition; what they find goes to the DataNode
// through a small interface (Reporter, DirReporter), which tells the
// NameNode.
//
// Callers: the DataNode creates one BlockScanner and one DirectoryScanner,
// adds volumes and block pools as they come, and closes both before the
// dataset. Both are safe for concurrent use.
//
// # Block scanner (Hadoop's BlockScanner and VolumeScanner)
//
// One goroutine per volume, at most dfs.block.scanner.volume.bytes.per.second
// (its own throttle.Throttler), each finalized replica at most once per
// dfs.datanode.scan.period.hours. A volume scanner walks each block pool's
// finalized/ tree with a storage.BlockIterator whose position is saved in
// <vol>/current/<bpid>/scanner.cursor (every
// dfs.block.scanner.cursor.save.interval.ms, at the end of a pass and when
// the scanner stops), so a restart resumes where the last run stopped, and
// says so in the log.
//
//	each round, the first that applies:
//	  a replica failed once              → verify it again
//	  a suspect is queued                → verify it
//	  the current pass is not over       → next block file: verify it (skipped
//	                                       if a reader verified it less than a
//	                                       period ago)
//	  a pool's pass is not over, or      → continue that pass, or rewind it
//	  began a period ago                   (a new pass)
//	  otherwise                          → wait until the first pool is due
//
// Verification outcomes (storage.Verify):
//
//	ok                        the replica's failure count is forgotten
//	gone, moved, not final    nothing (deleted, appended to, or recovering)
//	corrupt or I/O error      1st time: queued to be verified again at once;
//	                          2nd time: reported (reportBadBlocks), and for an
//	                          I/O error the volume is checked
//
// Suspects come first: a replica that gave an I/O error to a reader, that a
// client found corrupt (ERROR_CHECKSUM after READ_BLOCK) or whose transfer
// failed is queued by MarkSuspect, at most once per ten minutes. A client
// that read a whole replica and answered CHECKSUM_OK has verified it
// (MarkVerified): that counts as a scan, and a pass that comes to the
// replica less than a period later skips it.
//
// The status is on the DataNode's web page and at /blockScannerReport in
// Hadoop's text format (Report).
//
// # Directory scanner (Hadoop's DirectoryScanner)
//
// Every dfs.datanode.directoryscan.interval: each volume's finalized/ trees
// are listed (dfs.datanode.directoryscan.threads volumes at a time, each
// lister busy at most dfs.datanode.directoryscan.throttle.limit.ms.per.sec
// of every second), compared with the replica map and the map repaired
// (storage.Differences, storage.CheckAndUpdate); the repairs go to the
// DirReporter, which tells the NameNode.
//
// # Goroutines
//
// One per volume for the block scanner, one for the directory scanner (plus
// its listers while a scan runs). Close stops them all and waits.
//
//	bs := scanner.New(scanner.Config{BytesPerSecond: 1 << 20, Period: 504 * time.Hour}, clk, log, reporter)
//	bs.AddVolume(vol)
//	bs.AddPool(bp)
//	defer bs.Close()
package scanner
