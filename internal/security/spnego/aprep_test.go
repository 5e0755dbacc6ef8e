package spnego

import (
	"testing"

	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/messages"
	gspnego "github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/hdfsgo/hdfsgo/internal/security/krbtest"
)

// TestMutualAPRep: a client that asks for mutual authentication gets an
// AP-REP that decrypts with the session key and echoes its
// authenticator's time, as RFC 4120 §3.2.4 has the client check.
func TestMutualAPRep(t *testing.T) {
	kdc := krbtest.Start(t)
	acc := kdc.Acceptor("HTTP", 0)
	acc.Principal = "HTTP/localhost@" + krbtest.Realm
	signer, _ := NewSigner([]byte("s"))
	a := &Authenticator{Signer: signer, Acceptor: acc}
	cl := kdc.ClientFromKeytab("alice", kdc.AddPrincipal("alice"))
	tkt, key, err := cl.GetServiceTicket("HTTP/localhost")
	if err != nil {
		t.Fatal(err)
	}
	k, err := gspnego.NewKRB5TokenAPREQ(cl, tkt, key, []int{gssapi.ContextFlagInteg, gssapi.ContextFlagMutual}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := k.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	u, reply, err := a.Accept(tok)
	if err != nil || u.Name != "alice" {
		t.Fatalf("Accept: %v %v", u, err)
	}
	var resp gspnego.NegTokenResp
	if err := resp.Unmarshal(reply); err != nil {
		t.Fatal(err)
	}
	if resp.NegState != 0 || !resp.SupportedMech.Equal(gssapi.OIDKRB5.OID()) || len(resp.ResponseToken) == 0 {
		t.Fatalf("NegTokenResp %+v", resp)
	}
	// GSSAPI framing: 0x60 len, the Kerberos OID, token id 02 00, AP-REP.
	var kt5 gspnego.KRB5Token
	if err := kt5.Unmarshal(resp.ResponseToken); err != nil || !kt5.IsAPRep() {
		t.Fatalf("response token: %v (AP-REP %v)", err, kt5.IsAPRep())
	}
	var rep messages.APRep = kt5.APRep
	plain, err := crypto.DecryptEncPart(rep.EncPart, key, keyusage.AP_REP_ENCPART)
	if err != nil {
		t.Fatal(err)
	}
	var part messages.EncAPRepPart
	if err := part.Unmarshal(plain); err != nil {
		t.Fatal(err)
	}
	ab, err := crypto.DecryptEncPart(k.APReq.EncryptedAuthenticator, key, keyusage.AP_REQ_AUTHENTICATOR)
	if err != nil {
		t.Fatal(err)
	}
	var auth types.Authenticator
	if err := auth.Unmarshal(ab); err != nil {
		t.Fatal(err)
	}
	if !part.CTime.Equal(auth.CTime) || part.Cusec != auth.Cusec {
		t.Errorf("AP-REP time %v/%d, authenticator %v/%d", part.CTime, part.Cusec, auth.CTime, auth.Cusec)
	}
}
