package remoteerr

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"testing"
)

func TestFromRemoteMatches(t *testing.T) {
	all := []error{fs.ErrNotExist, fs.ErrExist, fs.ErrPermission, fs.ErrInvalid, syscall.ENOTEMPTY,
		ErrStandby, ErrRetriable, ErrSafeMode, ErrParentNotDirectory, ErrLeaseExpired,
		ErrAlreadyBeingCreated, ErrQuotaExceeded, ErrNSQuotaExceeded, ErrDSQuotaExceeded,
		ErrPathComponentTooLong, ErrMaxDirectoryItems, ErrInvalidPath, ErrUnsupported,
		ErrNoSuchMethod, ErrNoSuchProtocol, ErrNotReplicatedYet, ErrSnapshotAccess,
		ErrUnresolvedPath, ErrInvalidRequest, ErrVersionMismatch, ErrHealthCheckFailed,
		ErrServiceFailed, ErrJournalOutOfSync, ErrJournalNotFormatted, ErrCacheMiss, ErrNewerTxnID,
		ErrIllegalState, ErrAssertion, ErrIO}
	for _, tc := range []struct {
		class string
		want  []error
	}{
		{ClassFileNotFound, []error{fs.ErrNotExist}},
		{ClassFileAlreadyExists, []error{fs.ErrExist}},
		{ClassAlreadyBeingCreated, []error{fs.ErrExist, ErrAlreadyBeingCreated}},
		{ClassAccessControl, []error{fs.ErrPermission}},
		{"org.apache.hadoop.fs.permission.AccessControlException", []error{fs.ErrPermission}},
		{ClassSnapshotAccess, []error{fs.ErrPermission, ErrSnapshotAccess}},
		{ClassHadoopIllegalArg, []error{fs.ErrInvalid}},
		{ClassIllegalArgument, []error{fs.ErrInvalid}},
		{ClassInvalidPath, []error{fs.ErrInvalid, ErrInvalidPath}},
		{ClassPathIsNotEmptyDir, []error{syscall.ENOTEMPTY}},
		{ClassStandby, []error{ErrStandby}},
		{ClassRetriable, []error{ErrRetriable}},
		{ClassSafeMode, []error{ErrSafeMode}},
		{ClassParentNotDirectory, []error{ErrParentNotDirectory}},
		{ClassLeaseExpired, []error{ErrLeaseExpired}},
		{ClassQuotaExceeded, []error{ErrQuotaExceeded}},
		{ClassNSQuotaExceeded, []error{ErrQuotaExceeded, ErrNSQuotaExceeded}},
		{ClassDSQuotaExceeded, []error{ErrQuotaExceeded, ErrDSQuotaExceeded}},
		{ClassPathComponentTooLong, []error{ErrQuotaExceeded, ErrPathComponentTooLong}},
		{ClassMaxDirectoryItems, []error{ErrQuotaExceeded, ErrMaxDirectoryItems}},
		{ClassUnsupported, []error{ErrUnsupported}},
		{ClassNoSuchMethod, []error{ErrNoSuchMethod}},
		{ClassNoSuchProtocol, []error{ErrNoSuchProtocol}},
		{ClassNotReplicatedYet, []error{ErrNotReplicatedYet}},
		{ClassUnresolvedPath, []error{ErrUnresolvedPath}},
		{ClassInvalidRequest, []error{ErrInvalidRequest}},
		{ClassVersionMismatch, []error{ErrVersionMismatch}},
		{ClassHealthCheckFailed, []error{ErrHealthCheckFailed}},
		{ClassServiceFailed, []error{ErrServiceFailed}},
		{ClassJournalOutOfSync, []error{ErrJournalOutOfSync}},
		{ClassJournalNotFormatted, []error{ErrJournalNotFormatted}},
		{ClassCacheMiss, []error{ErrCacheMiss}},
		{ClassNewerTxnID, []error{ErrNewerTxnID}},
		{ClassIllegalState, []error{ErrIllegalState}},
		{ClassAssertion, []error{ErrAssertion}},
		{ClassIOException, []error{ErrIO}},
		{"com.example.SomethingElse", []error{ErrIO}},
		{"", []error{ErrIO}},
	} {
		t.Run(tc.class, func(t *testing.T) {
			err := fmt.Errorf("wrapped: %w", FromRemote(tc.class, "msg"))
			for _, target := range all {
				want := false
				for _, w := range tc.want {
					want = want || w == target
				}
				if got := errors.Is(err, target); got != want {
					t.Errorf("errors.Is(%s, %v) = %v, want %v", tc.class, target, got, want)
				}
			}
		})
	}
}

func TestClassOf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		class   string
		message string
	}{
		{"not exist", fmt.Errorf("stat /a: %w", fs.ErrNotExist), ClassFileNotFound, "stat /a: file does not exist"},
		{"path error", &os.PathError{Op: "open", Path: "/x", Err: syscall.ENOENT}, ClassFileNotFound, "open /x: no such file or directory"},
		{"exist", fs.ErrExist, ClassFileAlreadyExists, "file already exists"},
		{"not empty before exist", syscall.ENOTEMPTY, ClassPathIsNotEmptyDir, "directory not empty"},
		{"permission", fs.ErrPermission, ClassAccessControl, "permission denied"},
		{"invalid", fs.ErrInvalid, ClassHadoopIllegalArg, "invalid argument"},
		{"being created", ErrAlreadyBeingCreated, ClassAlreadyBeingCreated, ErrAlreadyBeingCreated.Error()},
		{"standby", fmt.Errorf("x: %w", ErrStandby), ClassStandby, "x: " + ErrStandby.Error()},
		{"ns quota", ErrNSQuotaExceeded, ClassNSQuotaExceeded, ErrNSQuotaExceeded.Error()},
		{"quota", ErrQuotaExceeded, ClassQuotaExceeded, ErrQuotaExceeded.Error()},
		{"invalid path", ErrInvalidPath, ClassInvalidPath, ErrInvalidPath.Error()},
		{"unsupported std", errors.ErrUnsupported, ClassUnsupported, "unsupported operation"},
		{"remote kept", fmt.Errorf("ctx: %w", New(ClassSafeMode, "Cannot create %s", "/a")), ClassSafeMode, "Cannot create /a"},
		{"helper", FileNotFound("/b"), ClassFileNotFound, "File does not exist: /b"},
		{"fallback", errors.New("disk on fire"), ClassIOException, "disk on fire"},
		{"nil", nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class, msg := ClassOf(tc.err)
			if class != tc.class || msg != tc.message {
				t.Errorf("ClassOf = (%q, %q), want (%q, %q)", class, msg, tc.class, tc.message)
			}
		})
	}
}

// TestRoundTrip checks that every sentinel survives server → wire → client.
func TestRoundTrip(t *testing.T) {
	claimed := map[error]bool{}
	for _, ent := range table {
		target := ent.targets[0]
		class, msg := ClassOf(fmt.Errorf("op: %w", target))
		if claimed[target] {
			// An earlier class owns the Go → Java direction of target.
			continue
		}
		claimed[target] = true
		if class != ent.class {
			t.Errorf("%v: class %s, want %s", target, class, ent.class)
		}
		if err := FromRemote(class, msg); !errors.Is(err, target) {
			t.Errorf("%v did not survive the round trip (%v)", target, err)
		}
	}
}

func TestErrorText(t *testing.T) {
	if got := AlreadyExists("/a").Error(); got != "org.apache.hadoop.fs.FileAlreadyExistsException: /a already exists" {
		t.Errorf("text %q", got)
	}
	if got := (&Error{Class: ClassIOException}).Error(); got != ClassIOException {
		t.Errorf("text %q", got)
	}
	if !errors.Is(FromRemote(ClassStandby, "a"), &Error{Class: ClassStandby}) {
		t.Error("two *Error of one class do not match")
	}
}
