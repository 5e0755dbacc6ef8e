// Package conf owns hdfsgo's view of Hadoop configuration: the built-in
// defaults (Hadoop 3.x core-default.xml and hdfs-default.xml values for every
// key this project reads), the site files core-site.xml and hdfs-site.xml,
// -D overrides, ${var} expansion and typed getters whose errors name the key,
// the value and the file it came from.
//
// Callers: cmd/hdfs and internal/cli resolve the configuration directory
// (--config DIR, else $HADOOP_CONF_DIR, else none) and call Load; every role
// (NameNode, DataNode, JournalNode, client tools) builds its typed Config
// from the *Conf; internal/minicluster uses With and WriteXML to produce the
// site files of test clusters.
//
// Concurrency: a *Conf is immutable once Load, Defaults or With returns it
// and is safe for concurrent use. Nothing in the package starts goroutines.
//
// # Layers
//
// Values are applied in this order; a later layer replaces an earlier one:
//
//	defaults  <  DIR/core-site.xml  <  DIR/hdfs-site.xml  <  -D key=value ...
//
// A key a file marks final keeps its value against the files after it; the
// attempt to override it is recorded and returned by Warnings. -D (and With)
// replace any value, final or not, as Hadoop's Configuration.set does.
// Source(key) tells "default", the file path, or "-D".
//
// # File format
//
// A site file is one XML document, at most MaxFileSize bytes:
//
//	<?xml version="1.0"?>                      optional declaration
//	<configuration>                            required root element
//	  <property>                               zero or more
//	    <name>dfs.blocksize</name>             required; trimmed
//	    <value>256m</value>                    required (may be empty); kept as written
//	    <final>true</final>                    optional; "true" makes the key final
//	    <description>...</description>         optional; ignored
//	  </property>
//	  <property name="k" value="v" final="true"/>   attribute form, also accepted
//	</configuration>
//
// Comments and processing instructions are ignored. Other elements under
// <configuration> are ignored with a warning. xi:include is rejected with
// ErrInclude. A malformed file fails with ErrMalformed, naming the file and
// line.
//
// # Expansion
//
// Values are expanded when read: ${other.key}, ${env.NAME},
// ${env.NAME:-fallback}, and ${user.name} (from $USER unless set as a key).
// Expansion repeats over the result, so references nest. A reference that
// cannot be resolved is left as written (later references in the same value
// are still expanded); a value that would contain its own reference again is
// left unexpanded as a whole, as Hadoop does. More than MaxSubstitutions
// substitutions is an error naming the key (ErrExpansionDepth); Load checks
// every key so a cycle fails at start-up.
//
// # Typed values
//
//	Int, Int32   decimal or 0x hex, optional sign
//	Bool         "true" / "false", any case
//	Float        Java float syntax, "0.999f" accepted
//	Duration     integer + ns|us|ms|s|m|h|d; bare number in the key's unit
//	Size         integer + k|m|g|t|p|e (binary: 1k = 1024)
//	Strings      comma (or newline) separated, trimmed, empties dropped
//
// Example:
//
//	c, err := conf.Load(conf.Options{Dir: dir, Overrides: overrides})
//	if err != nil {
//		return err
//	}
//	blockSize, err := c.Size(conf.DFSBlockSize)
//	if err != nil {
//		return err // conf: dfs.blocksize="12x" (from /etc/hadoop/hdfs-site.xml): invalid size
//	}
//	interval, err := c.Duration(conf.DFSHeartbeatInterval) // "3s" -> 3 * time.Second
package conf
