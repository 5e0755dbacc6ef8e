package web

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRenderPageEscapes(t *testing.T) {
	const evil = `<script>alert("x")</script>`
	p := Page{
		Title:    "T" + evil,
		Subtitle: "S" + evil,
		Sections: []Section{{
			Heading: "H" + evil,
			Note:    "N" + evil,
			Rows:    [][2]string{{"K" + evil, "V" + evil}},
			Table: &Table{
				Header: []string{"C" + evil, "D"},
				Rows:   [][]string{{"R" + evil, "2"}},
			},
		}, {
			Heading: "Empty",
			Table:   &Table{Header: []string{"A", "B"}, Empty: "E" + evil},
		}},
	}
	rec := httptest.NewRecorder()
	RenderPage(rec, p)
	body := rec.Body.String()
	if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	if strings.Contains(strings.ToLower(body), "<script") {
		t.Errorf("unescaped script in page:\n%s", body)
	}
	escaped := "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"
	for _, prefix := range []string{"T", "S", "H", "N", "K", "V", "C", "R", "E"} {
		if !strings.Contains(body, prefix+escaped) {
			t.Errorf("field %s not rendered escaped", prefix)
		}
	}
	if n := strings.Count(body, "<title>T"+escaped+"</title>"); n != 1 {
		t.Errorf("title rendered %d times", n)
	}
}

func TestRenderPageShape(t *testing.T) {
	rec := httptest.NewRecorder()
	RenderPage(rec, Page{
		Title: "NameNode 'nn1:8020' (active)",
		Sections: []Section{
			{Heading: "Summary", Rows: [][2]string{{"Live Nodes", "3"}}},
			{Heading: "DataNodes", Table: &Table{Header: []string{"Node", "Capacity"}, Empty: "No DataNodes"}},
			{Heading: "Other", Table: &Table{}},
		},
	})
	body := rec.Body.String()
	for _, want := range []string{
		"<!DOCTYPE html>",
		"<style>",
		`<tr><th>Live Nodes</th><td>3</td></tr>`,
		`<tr><th>Node</th><th>Capacity</th></tr>`,
		`<td class="empty" colspan="2">No DataNodes</td>`,
		`<td class="empty">None</td>`,
		`<a href="/jmx">`, `<a href="/conf">`, `<a href="/stacks">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q:\n%s", want, body)
		}
	}
	for _, banned := range []string{"<script", "src=", "<link", "http://", "https://"} {
		if strings.Contains(body, banned) {
			t.Errorf("page contains %q (must be self-contained, no JavaScript)", banned)
		}
	}
}
