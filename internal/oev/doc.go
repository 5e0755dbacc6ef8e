// Package oev is the offline edits viewer behind `hdfs oev`: it turns an
// edit-log segment (package editlog's format, read with its Decoder) into
// XML structured as Hadoop's oev writes it, turns such XML back into a
// segment byte for byte, and counts the ops per opcode as Hadoop's stats
// processor does; Options renumber txids (-f) and skip damaged records
// (-r, recovery mode). It never changes the segment format; it is pure (readers
// and writers in, no files, no clock) and safe for concurrent use.
//
// The XML:
//
//	<?xml version="1.0" encoding="UTF-8"?>
//	<EDITS>
//	  <EDITS_VERSION>2</EDITS_VERSION>
//	  <RECORD>
//	    <OPCODE>OP_MKDIR</OPCODE>
//	    <DATA>
//	      <TXID>2</TXID>
//	      <INODEID>16386</INODEID>
//	      <PATH>/d</PATH>
//	      <TIMESTAMP>1700000000000</TIMESTAMP>
//	      <PERMISSION_STATUS>
//	        <USERNAME>u</USERNAME>
//	        <GROUPNAME>supergroup</GROUPNAME>
//	        <MODE>493</MODE>
//	      </PERMISSION_STATUS>
//	    </DATA>
//	  </RECORD>
//	</EDITS>
//
// EDITS_VERSION is the segment's layout version (editlog.LayoutVersion, a
// positive number: our format, not Hadoop's negative layout numbers).
// Each op's fields carry Hadoop's element names (PATH, SRC, DST,
// TIMESTAMP, MTIME, ATIME, BLOCK with BLOCK_ID/NUM_BYTES/GENSTAMP,
// RPC_CLIENTID/RPC_CALLID, ...) in Hadoop's order; only the fields our
// ops have are written (no LENGTH, no ERASURE_CODING_POLICY_ID). A client
// id of 16 bytes is written as a UUID, as Hadoop does.
//
// Text that XML cannot carry is escaped by package xmltext, as Hadoop's
// XMLUtils does, so that every string survives byte for byte.
//
//	var buf bytes.Buffer
//	err := oev.SegmentToXML(segment, "edits_1-10", &buf)
//	err = oev.XMLToSegment(&buf, out) // byte-identical to segment
package oev
