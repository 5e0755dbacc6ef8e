// Package krbtest starts a real MIT Kerberos KDC (Debian's krb5-kdc) for
// tests: a realm of its own in a temporary directory, on 127.0.0.1, with
// principals and keytabs made by kadmin.local. Tests that use it skip when
// the KDC is not installed (or fail under HDFSGO_REQUIRE_TOOLS=1).
// Test-support only.
package krbtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	krbclient "github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/hdfsgo/hdfsgo/internal/security"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// Install is the command that installs what the realm needs.
const Install = "apt-get install krb5-kdc krb5-admin-server krb5-user"

// Realm is the name of every test realm.
const Realm = "HDFSGO.TEST"

// KDC is a running realm.
type KDC struct {
	Dir        string // the realm's files
	Krb5Conf   string // client configuration (KRB5_CONFIG)
	kdcConf    string
	env        []string
	t          testing.TB
	kinit      string
	kadminPath string
	port       int // the KDC's UDP and TCP port
}

// Start creates a realm and starts its KDC; the test's cleanup stops it.
func Start(t testing.TB) *KDC {
	t.Helper()
	krb5kdc := testtool.Require(t, "/usr/sbin/krb5kdc", Install)
	kdbUtil := testtool.Require(t, "/usr/sbin/kdb5_util", Install)
	kadmin := testtool.Require(t, "/usr/sbin/kadmin.local", Install)
	kinit := testtool.Require(t, "kinit", Install)
	dir := t.TempDir()
	k := &KDC{Dir: dir, Krb5Conf: filepath.Join(dir, "krb5.conf"), kdcConf: filepath.Join(dir, "kdc.conf"),
		t: t, kinit: kinit, kadminPath: kadmin}
	must(t, os.WriteFile(filepath.Join(dir, "kadm5.acl"), nil, 0o644))
	k.env = append(os.Environ(), "KRB5_CONFIG="+k.Krb5Conf, "KRB5_KDC_PROFILE="+k.kdcConf,
		"KRB5CCNAME=FILE:"+filepath.Join(dir, "ccache-unused"))
	k.writeConf(freePort(t))
	k.run(kdbUtil, "create", "-s", "-r", Realm, "-P", "master-password-of-the-test-realm")
	// The port was free when picked, but another process may take it
	// before the KDC binds it; a KDC that exits is started again on
	// another port, a bounded number of times.
	var failures []string
	for attempt := range startAttempts {
		if attempt > 0 {
			k.writeConf(freePort(t))
		}
		stop, why := k.startKDC(krb5kdc)
		if why == "" {
			t.Cleanup(stop)
			return k
		}
		failures = append(failures, why)
	}
	t.Fatalf("krbtest: the KDC did not start in %d attempts:\n%s", startAttempts, strings.Join(failures, "\n"))
	return nil
}

// startAttempts bounds how often Start tries the KDC on a new port;
// startWait bounds how long one attempt waits for the KDC to answer (the
// machine may be busy: creating the realm and starting take a few hundred
// milliseconds when it is idle).
const (
	startAttempts = 3
	startWait     = 30 * time.Second
)

// writeConf writes the client and KDC configurations for a KDC on port.
func (k *KDC) writeConf(port int) {
	k.t.Helper()
	krb5 := fmt.Sprintf(`[libdefaults]
 default_realm = %[1]s
 dns_lookup_realm = false
 dns_lookup_kdc = false
 rdns = false
 udp_preference_limit = 1
 default_tkt_enctypes = aes256-cts-hmac-sha1-96
 default_tgs_enctypes = aes256-cts-hmac-sha1-96
 permitted_enctypes = aes256-cts-hmac-sha1-96
 forwardable = false

[realms]
 %[1]s = {
  kdc = 127.0.0.1:%[2]d
 }
`, Realm, port)
	kdc := fmt.Sprintf(`[kdcdefaults]
 kdc_ports = %[2]d
 kdc_tcp_ports = %[2]d

[realms]
 %[1]s = {
  database_name = %[3]s/principal
  key_stash_file = %[3]s/stash
  acl_file = %[3]s/kadm5.acl
  supported_enctypes = aes256-cts-hmac-sha1-96:normal
  max_life = 10h
  kdc_ports = %[2]d
  kdc_tcp_ports = %[2]d
  kdc_listen = 127.0.0.1:%[2]d
  kdc_tcp_listen = 127.0.0.1:%[2]d
 }

[logging]
 kdc = FILE:%[4]s
`, Realm, port, k.Dir, k.logPath(port))
	must(k.t, os.WriteFile(k.Krb5Conf, []byte(krb5), 0o644))
	must(k.t, os.WriteFile(k.kdcConf, []byte(kdc), 0o644))
	k.port = port
}

// logPath is the KDC's log when it runs on port: one file a port, so that
// what one attempt of Start logged is not taken for another's.
func (k *KDC) logPath(port int) string {
	return filepath.Join(k.Dir, fmt.Sprintf("kdc-%d.log", port))
}

// startKDC starts krb5kdc on k.port and waits until it has bound its
// sockets (its log says it is "commencing operation") and accepts a TCP
// connection there; a connection alone could be another process's that
// holds the port, from which the KDC exits. It returns the function that stops it, or why it did
// not start (it exited, or did not answer within startWait); a KDC that did
// not start is stopped before startKDC returns.
func (k *KDC) startKDC(krb5kdc string) (stop func(), why string) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, krb5kdc, "-n", "-r", Realm)
	cmd.Env = k.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, err.Error()
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	stop = func() {
		cancel()
		<-exited
	}
	addr := fmt.Sprintf("127.0.0.1:%d", k.port)
	logPath := k.logPath(k.port)
	deadline := time.NewTimer(startWait)
	defer deadline.Stop()
	for {
		if log, _ := os.ReadFile(logPath); bytes.Contains(log, []byte("commencing operation")) {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
				return stop, ""
			}
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Sprintf("on port %d it exited (%v): %s%s", k.port, cmd.ProcessState, out.String(), log)
		case <-deadline.C:
			stop()
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Sprintf("on port %d it did not answer within %v: %s%s", k.port, startWait, out.String(), log)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (k *KDC) run(prog string, args ...string) string {
	k.t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Env = k.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		k.t.Fatalf("krbtest: %s %s: %v\n%s", prog, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func freePort(t testing.TB) int {
	t.Helper()
	// The KDC listens on the port over both UDP and TCP.
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		must(t, err)
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port))
		l.Close()
		if err == nil {
			u.Close()
			return port
		}
	}
	t.Fatal("krbtest: no free port for the KDC")
	return 0
}

// AddPrincipal creates a principal with a random key and writes its
// keytab; it returns the keytab's path.
func (k *KDC) AddPrincipal(name string) string {
	k.t.Helper()
	kt := k.keytabPath(name)
	k.run(k.kadminPath, "-q", "addprinc -randkey "+name)
	k.run(k.kadminPath, "-q", "ktadd -k "+kt+" "+name)
	return kt
}

// keytabPath is where AddPrincipal writes the keytab of principal name.
func (k *KDC) keytabPath(name string) string {
	return filepath.Join(k.Dir, strings.NewReplacer("/", "_", "@", "_").Replace(name)+".keytab")
}

// Acceptor returns what a daemon on localhost accepts tickets with: the
// keys of service/localhost@Realm (the principal is made by the first
// call for the service), the principal service/_HOST@Realm, auth_to_local
// DEFAULT and the protection levels q.
func (k *KDC) Acceptor(service string, q security.QOP) *security.Acceptor {
	k.t.Helper()
	name := service + "/localhost"
	path := k.keytabPath(name)
	if _, err := os.Stat(path); err != nil {
		path = k.AddPrincipal(name)
	}
	kt, err := keytab.Load(path)
	must(k.t, err)
	rules, err := security.ParseRules("DEFAULT")
	must(k.t, err)
	return &security.Acceptor{Keytab: kt, KeytabPath: path, Principal: service + "/_HOST@" + Realm,
		Rules: rules, DefaultRealm: Realm, Protection: q}
}

// AddPrincipalTo creates a principal with a random key and adds it to
// the keytab at path (created when absent).
func (k *KDC) AddPrincipalTo(name, path string) {
	k.t.Helper()
	k.run(k.kadminPath, "-q", "addprinc -randkey "+name)
	k.run(k.kadminPath, "-q", "ktadd -k "+path+" "+name)
}

// Kinit gets a ticket-granting ticket for the principal from its keytab
// into a new credential cache, as an operator's kinit does; it returns the
// cache's path (for KRB5CCNAME).
func (k *KDC) Kinit(principal, keytabPath string) string {
	k.t.Helper()
	cc := filepath.Join(k.Dir, "ccache-"+strings.NewReplacer("/", "_", "@", "_").Replace(principal)+fmt.Sprint(time.Now().UnixNano()))
	k.run(k.kinit, "-k", "-t", keytabPath, "-c", "FILE:"+cc, principal)
	return cc
}

// Config returns the parsed client configuration.
func (k *KDC) Config() *config.Config {
	k.t.Helper()
	c, err := config.Load(k.Krb5Conf)
	must(k.t, err)
	return c
}

// ClientFromCCache returns a gokrb5 client logged in from the cache.
func (k *KDC) ClientFromCCache(path string) *krbclient.Client {
	k.t.Helper()
	cc, err := credentials.LoadCCache(path)
	must(k.t, err)
	cl, err := krbclient.NewFromCCache(cc, k.Config(), krbclient.DisablePAFXFAST(true))
	must(k.t, err)
	return cl
}

// ClientFromKeytab returns a gokrb5 client logged in with the keytab.
func (k *KDC) ClientFromKeytab(user, keytabPath string) *krbclient.Client {
	k.t.Helper()
	kt, err := keytab.Load(keytabPath)
	must(k.t, err)
	cl := krbclient.NewWithKeytab(user, Realm, kt, k.Config(), krbclient.DisablePAFXFAST(true))
	must(k.t, cl.Login())
	return cl
}
