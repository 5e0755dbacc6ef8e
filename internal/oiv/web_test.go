package oiv

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func get(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", url, err, b)
	}
	return resp.StatusCode, v
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The Web viewer answers WebHDFS's read operations from the image.
func TestWebViewer(t *testing.T) {
	img, err := LoadImage(bytes.NewReader(testImage(t)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(img)
	defer srv.Close()
	base := srv.URL + "/webhdfs/v1"
	for _, c := range []struct {
		url  string
		code int
		want string
	}{
		{"/user/data.csv?op=GETFILESTATUS", 200, `{"FileStatus":{"accessTime":1700000000300,"blockSize":134217728,"childrenNum":0,"fileId":16387,"group":"staff","length":134217733,"modificationTime":1700000000200,"owner":"alice","pathSuffix":"","permission":"644","replication":3,"storagePolicy":2,"type":"FILE"}}`},
		{"/user?op=LISTSTATUS", 200, `{"FileStatuses":{"FileStatus":[` +
			`{"accessTime":1700000000300,"blockSize":134217728,"childrenNum":0,"fileId":16387,"group":"staff","length":134217733,"modificationTime":1700000000200,"owner":"alice","pathSuffix":"data.csv","permission":"644","replication":3,"storagePolicy":2,"type":"FILE"},` +
			`{"accessTime":1700000000400,"blockSize":1048576,"childrenNum":0,"fileId":16388,"group":"staff","length":0,"modificationTime":1700000000400,"owner":"bob","pathSuffix":"open","permission":"600","replication":1,"storagePolicy":0,"type":"FILE"}]}}`},
		{"/?op=GETFILESTATUS", 200, `{"FileStatus":{"accessTime":0,"blockSize":0,"childrenNum":3,"fileId":16385,"group":"supergroup","length":0,"modificationTime":1700000000000,"owner":"hdfs","pathSuffix":"","permission":"755","replication":0,"storagePolicy":0,"type":"DIRECTORY"}}`},
		{"/?op=GETCONTENTSUMMARY", 200, `{"ContentSummary":{"directoryCount":4,"ecPolicy":"","fileCount":3,"length":134217733,"quota":-1,"spaceConsumed":402653199,"spaceQuota":-1,"typeQuota":{}}}`},
		{"/user?op=GETACLSTATUS", 200, `{"AclStatus":{"entries":["user:bob:r-x","default:group::rw-"],"group":"supergroup","owner":"hdfs","permission":"777","stickyBit":true}}`},
		{"/user?op=LISTXATTRS", 200, `{"XAttrNames":"[]"}`},
		{"/user/data.csv?op=LISTXATTRS", 200, `{"XAttrNames":"[\"user.a1\",\"trusted.bin\",\"user.novalue\"]"}`},
		{"/user/data.csv?op=GETXATTRS", 200, `{"XAttrs":[{"name":"user.a1","value":"0x313233"},{"name":"trusted.bin","value":"0x000102"},{"name":"user.novalue","value":null}]}`},
		{"/nope?op=GETFILESTATUS", 404, `{"RemoteException":{"exception":"FileNotFoundException","javaClassName":"java.io.FileNotFoundException","message":"File does not exist: /nope"}}`},
		{"/user?op=OPEN", 400, `{"RemoteException":{"exception":"IllegalArgumentException","javaClassName":"java.lang.IllegalArgumentException","message":"Invalid value for webhdfs parameter \"op\": \"OPEN\" is not supported by the image viewer"}}`},
	} {
		code, v := get(t, base+c.url)
		if code != c.code || js(v) != c.want {
			t.Errorf("%s: %d %s\nwant %d %s", c.url, code, js(v), c.code, c.want)
		}
	}
}
