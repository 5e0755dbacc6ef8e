package elector_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/scripttest"
	"github.com/hdfsgo/hdfsgo/internal/zkfc/elector"
	"github.com/hdfsgo/hdfsgo/internal/zkfc/health"
)

// The transcripts in testdata show every input an Elector takes and every
// action it returns, log lines included (DEBUG ones left out). A case's
// input lines, when present, are the message of a result.
//
//	new data=D [retries=N] [session=S]   an elector whose session S is open
//	health state=SERVICE_HEALTHY         the health monitor entered a state
//	reported state=STANDBY               a health check's service state
//	cede millis=M / cede-done ok=B       cedeActive and its standby call
//	fire timer=recheck|rejoin|reconnect gen=G
//	opened session=S [err=E]             OpenSession's answer
//	connected|disconnected|expired|deleted|changed session=S
//	created session=S code=C             CreateLock's answer
//	stat session=S code=C [mine=B]       StatLock's answer
//	breadcrumb session=S code=C [data=D version=V]
//	fenced ok=B / active ok=B / standby ok=B
//	written session=S code=C
//	quit                                 the controller stops
//	status
func TestElectorScripts(t *testing.T) {
	for _, name := range []string{"win", "failover", "zookeeper", "cede"} {
		t.Run(name, func(t *testing.T) { runScript(t, "testdata/"+name+".txt") })
	}
}

func runScript(t *testing.T, path string) {
	var e *elector.Elector
	scripttest.Run(t, path, func(t *testing.T, c *scripttest.Case) string {
		msg := strings.Join(c.Input, "\n")
		session := int(c.IntOr(t, "session", 0))
		var out []elector.Action
		switch c.Cmd {
		case "new":
			e = elector.New(elector.Config{
				Data:           []byte(c.Str(t, "data")),
				MaxRetries:     int(c.IntOr(t, "retries", 3)),
				LockPath:       "/hadoop-ha/ns1/ActiveStandbyElectorLock",
				BreadcrumbPath: "/hadoop-ha/ns1/ActiveBreadCrumb",
			}, int(c.IntOr(t, "session", 1)))
			return status(e)
		case "status":
			return status(e)
		case "health":
			out = e.Health(healthState(t, c.Str(t, "state")))
		case "reported":
			out = e.ServiceReported(serviceState(t, c.Str(t, "state")))
		case "cede":
			out = e.Cede(int32(c.Int(t, "millis")))
		case "cede-done":
			out = e.CedeStandbyDone(c.BoolOr(t, "ok", true), msg)
		case "fire":
			kinds := map[string]elector.TimerKind{"recheck": elector.TimerRecheck, "rejoin": elector.TimerRejoin, "reconnect": elector.TimerReconnect}
			k, ok := kinds[c.Str(t, "timer")]
			if !ok {
				t.Fatalf("line %d: unknown timer", c.Line)
			}
			out = e.Fire(elector.Timer{Kind: k, Gen: int(c.Int(t, "gen"))})
		case "opened":
			var err error
			if c.Has("err") {
				err = errors.New(c.Args["err"])
			}
			out = e.SessionOpened(session, err)
		case "connected":
			out = e.Connected(session)
		case "disconnected":
			out = e.Disconnected(session)
		case "expired":
			out = e.Expired(session)
		case "deleted":
			out = e.LockDeleted(session)
		case "changed":
			out = e.LockChanged(session)
		case "created":
			out = e.LockCreated(session, result(t, c))
		case "stat":
			out = e.LockStat(session, result(t, c), c.BoolOr(t, "mine", false))
		case "breadcrumb":
			var data []byte
			if c.Has("data") {
				data = []byte(c.Args["data"])
			}
			out = e.BreadcrumbRead(session, result(t, c), data, int32(c.IntOr(t, "version", 0)))
		case "fenced":
			out = e.Fenced(c.BoolOr(t, "ok", true), msg)
		case "written":
			out = e.BreadcrumbWritten(session, result(t, c))
		case "active":
			out = e.BecameActive(c.BoolOr(t, "ok", true), msg)
		case "standby":
			out = e.BecameStandby(c.BoolOr(t, "ok", true), msg)
		case "quit":
			out = e.Quit()
		default:
			t.Fatalf("line %d: unknown command %s", c.Line, c.Cmd)
		}
		var lines []string
		for _, a := range out {
			if a.Kind == elector.Log && a.Level == elector.LevelDebug {
				continue
			}
			lines = append(lines, a.String())
		}
		if len(lines) == 0 {
			return "(nothing)"
		}
		return strings.Join(lines, "\n")
	})
}

func status(e *elector.Elector) string {
	s := e.Status()
	return fmt.Sprintf("state=%v service=%v health=%v session=%d election=%t ceded=%t fatal=%t",
		s.State, s.Service, s.Health, s.Session, s.InElection, s.Ceded, s.Fatal)
}

func result(t *testing.T, c *scripttest.Case) elector.Result {
	name := c.Str(t, "code")
	codes := map[string]elector.Code{"OK": elector.OK, "NONODE": elector.NoNode, "NODEEXISTS": elector.NodeExists,
		"CONNECTIONLOSS": elector.ConnectionLoss, "OPERATIONTIMEOUT": elector.ConnectionLoss, "SESSIONEXPIRED": elector.SessionExpired}
	if code, ok := codes[name]; ok {
		return elector.Result{Code: code, Name: name}
	}
	return elector.Result{Code: elector.Failed, Name: name}
}

func healthState(t *testing.T, s string) health.State {
	for st := health.Initializing; st <= health.HealthMonitorFailed; st++ {
		if st.String() == s {
			return st
		}
	}
	t.Fatalf("unknown health state %q", s)
	return 0
}

func serviceState(t *testing.T, s string) elector.ServiceState {
	for st := elector.ServiceInitializing; st <= elector.ServiceObserver; st++ {
		if st.String() == s {
			return st
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("unknown service state %q", s)
	}
	return elector.ServiceState(n)
}
