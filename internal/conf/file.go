package conf

import (
	"fmt"
	"os"
)

// ReadFile reads the properties of one configuration file in Hadoop's
// format that is not a site file (hadoop-policy.xml), in file order, with
// the values as written. A missing file is an error wrapping
// fs.ErrNotExist.
func ReadFile(path string) ([]KeyValue, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("conf: %w", err)
	}
	defer f.Close()
	props, _, err := parseXML(f, path)
	if err != nil {
		return nil, err
	}
	kvs := make([]KeyValue, 0, len(props))
	for _, p := range props {
		kvs = append(kvs, KeyValue{Key: p.name, Value: p.value})
	}
	return kvs, nil
}

// Dir is the configuration directory Load read the site files from (""
// for defaults only); other files of the configuration, such as
// hadoop-policy.xml, are read from it.
func (c *Conf) Dir() string { return c.dir }
