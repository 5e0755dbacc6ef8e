// Package imagetransfer moves images and finalized edit segments between
// nodes over HTTP, as HDFS's image servlet does: a Server (the http.Handler a
// role mounts at Path, "/imagetransfer", on its web server) and a Client.
// The package knows no role: what a node serves from, where uploads go,
// whether it takes them, and what happens after one is stored are the Host
// functions the role passes in.
//
// Who uses it:
//
//   - the active NameNode serves images and segments (to hdfs namenode
//     -bootstrapStandby, to Checkpoint, Backup and Secondary nodes) and takes
//     images uploaded by the standby's checkpointer and by Checkpoint nodes;
//   - the standby NameNode's checkpointer uploads (Client.UploadImage), and
//     -bootstrapStandby downloads (Client.DownloadImage);
//   - Checkpoint/Backup/Secondary nodes download images and segments and
//     upload merged images; JournalNodes serve and fetch segments.
//
// Server, Client and ParseRequest are safe for concurrent use. The package
// starts no goroutines of its own beyond fsimage.SaveEncoded's per-directory
// writers (ended before it returns), the HTTP transport's connections (see
// Client.Close) and a stall timer that runs only when it fires.
//
// # The exchange
//
// Parameter, header and file names are Hadoop's (ImageServlet and
// TransferFsImage), so that operators find what they know; the image bytes
// are this implementation's own format (package fsimage).
//
// Download an image (txid=latest: the newest the server has):
//
//	GET /imagetransfer?getimage=1&txid=<N>|latest[&storageInfo=<si>][&imageFile=IMAGE][&bootstrapstandby=true|false] HTTP/1.1
//
//	HTTP/1.1 200 OK
//	Content-Length: <size>
//	Content-Type: application/octet-stream
//	X-MD5-Digest: <32 hex digits, from fsimage_<N>.md5>
//	X-Image-Edits-Name: fsimage_<N:019d>
//	Content-Disposition: attachment; filename=fsimage_<N:019d>
//
//	<size bytes of fsimage_<N>>
//
// Download a finalized edit segment:
//
//	GET /imagetransfer?getedit=1&startTxId=<A>&endTxId=<B>[&storageInfo=<si>] HTTP/1.1
//
//	HTTP/1.1 200 OK
//	Content-Length: <size>
//	X-Image-Edits-Name: edits_<A:019d>-<B:019d>
//	Content-Disposition: attachment; filename=edits_<A:019d>-<B:019d>
//
//	<size bytes of edits_<A>-<B>>
//
// Upload an image (chunked when larger than dfs.image.transfer.chunksize):
//
//	PUT /imagetransfer?txid=<N>&storageInfo=<si>&File-Length=<size>&imageFile=IMAGE HTTP/1.1
//	Content-Length: <size>  (or Transfer-Encoding: chunked)
//	Content-Type: application/octet-stream
//	Content-Transfer-Encoding: binary
//	X-MD5-Digest: <32 hex digits>
//	Expect: 100-continue     (this package's client; a refusal then costs no body)
//
//	<size bytes of fsimage_<N>>
//
//	HTTP/1.1 200 OK          (stored: fsimage_<N> and its .md5 in every name dir)
//
// storageInfo is "<layoutVersion>:<namespaceID>:<cTime>:<clusterID>"
// (StorageInfo). Every request is checked before anything is read or sent;
// refusals carry a text/plain body saying what was wrong:
//
//	400 Bad Request          a parameter, header or length is missing or invalid
//	                         ("Illegal parameters to TransferFsImage: …"); an upload
//	                         that is short, long, not an image of the txid, or whose
//	                         bytes do not hash to X-MD5-Digest (nothing is stored)
//	403 Forbidden            storageInfo (or the uploaded image's namespace or layout)
//	                         differs: "This namenode has storage info … but the
//	                         secondary expected …"
//	404 Not Found            "Could not find image with txid N", "No edits file for
//	                         txid A-B exists!"
//	405 Method Not Allowed   anything but GET and PUT
//	408 Request Timeout      an upload stalled for dfs.image.transfer.timeout
//	409 Conflict             the server has this image or a newer one ("Either current
//	                         namenode has checkpointed or another checkpointer already
//	                         uploaded an checkpoint for txid N"), or an upload of it or a
//	                         newer one is in progress ("… already in the process of
//	                         uploading a checkpoint …"), or Host.AdmitUpload said no
//	413 Payload Too Large    File-Length over Config.MaxImageSize
//	417 Expectation Failed   the node does not take uploads now ("… is currently not in
//	                         a state which can accept uploads of new fsimages. State: …")
//	500 Internal Server Error  storing failed in every name dir, or no file could be read
//
// Hadoop answers every other failure with 410 Gone; a Hadoop client treats
// any status but 200 as failure, and on PUT reads 403, 409 and 417 as this
// package does (authentication or storage failure, old transaction, not
// active). On the client side the refusals are *HTTPError values matching
// ErrBadRequest, ErrStorageMismatch, ErrNotFound, ErrOlderImage,
// ErrConflict, ErrNotAccepting, ErrTooLarge, ErrTimeout or ErrServer.
//
// # Durability
//
// An upload is stored with fsimage.SaveEncoded: fsimage.ckpt_<N> in every
// name dir, MD5 compared with X-MD5-Digest, synced, then renamed to
// fsimage_<N> with its .md5, the directory synced. A download of an image
// takes the same path; a download of a segment goes to
// edits_tmp_<A>-<B>_<millis>, is synced and read back as records A..B, then
// renamed to edits_<A>-<B>. A transfer that fails or is cut leaves no file
// under a final name; fsimage.CleanCheckpoints and CleanTmpEdits remove what
// a crash left.
//
// # Limits
//
// Config.Timeout (dfs.image.transfer.timeout, 60 s) bounds every wait for
// progress on both ends; Config.BandwidthPerSec
// (dfs.image.transfer.bandwidthPerSec) and BootstrapBandwidthPerSec
// (dfs.image.transfer-bootstrap-standby.bandwidthPerSec) throttle each
// transfer, metered per Config.ChunkSize (dfs.image.transfer.chunksize).
// Only http:// is spoken; an https:// address is ErrHTTPSNotSupported.
//
// # Use
//
//	its, _ := imagetransfer.NewServer(cfg, imagetransfer.Host{
//		FS:            vfs.Default,
//		ImageDirs:     func() []string { return nameDirs },
//		EditsDirs:     func() []string { return editsCurrentDirs },
//		StorageInfo:   func() imagetransfer.StorageInfo { return si },
//		AcceptUploads: func() (bool, string) { return ha.IsActive(), ha.StateName() },
//		ImageStored:   func(ctx context.Context, s imagetransfer.Stored) { retain(s.TxID) },
//	})
//	web.Handle(imagetransfer.Path, its)
//
//	c, _ := imagetransfer.NewClient(cfg, imagetransfer.ClientOptions{FS: vfs.Default})
//	defer c.Close()
//	err := c.UploadImage(ctx, "http://nn1:9870", txid, nameDirs[0], si)
//	if errors.Is(err, imagetransfer.ErrOlderImage) { /* the active has it already */ }
package imagetransfer
