package web

import (
	"bytes"
	"html/template"
	"net/http"
)

// Page is a simple status page: a title, a line under it, and sections.
type Page struct {
	Title    string
	Subtitle string
	// Nav is a row of tabs under the title (none if empty); the Current
	// one is marked.
	Nav      []NavLink
	Sections []Section
}

// NavLink is one tab of a Page's Nav.
type NavLink struct {
	Label, Href string
	Current     bool
}

// Section is a heading with either key/value rows (Rows) or a table (Table), or both.
type Section struct {
	Heading string
	Rows    [][2]string // rendered as a two-column definition table
	Table   *Table
	Note    string // a paragraph under the heading (plain text)
}

// Table is a header row and data rows; an empty Rows prints Empty.
type Table struct {
	Header []string
	Rows   [][]string
	// Hrefs, when set, has the shape of Rows: a cell whose Href is not
	// empty is a link to it.
	Hrefs [][]string
	Empty string // e.g. "No DataNodes"
}

// href is the link of cell (r, c), "" if none.
func (t *Table) href(r, c int) string {
	if r < len(t.Hrefs) && c < len(t.Hrefs[r]) {
		return t.Hrefs[r][c]
	}
	return ""
}

// pageTemplate is parsed once and only executed afterwards, which
// html/template allows from many goroutines at once.
var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"href": func(t *Table, r, c int) string { return t.href(r, c) },
}).Parse(pageHTML))

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body{font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#2d4a6b;color:#fff;padding:12px 24px}
header h1{margin:0;font-size:1.5em}
header p{margin:4px 0 0;opacity:.85}
main{padding:8px 24px}
section{margin:18px 0}
h2{font-size:1.15em;border-bottom:1px solid #ccc;padding-bottom:4px}
table{border-collapse:collapse;background:#fff}
th,td{border:1px solid #ddd;padding:4px 10px;text-align:left;vertical-align:top}
th{background:#eef2f6}
table.kv th{width:18em}
td.empty{color:#777;font-style:italic}
nav{background:#e4eaf1;padding:0 24px;border-bottom:1px solid #c8d2de}
nav a{display:inline-block;padding:8px 12px;color:#2d4a6b;text-decoration:none}
nav a.current{background:#fafafa;font-weight:bold;border:1px solid #c8d2de;border-bottom-color:#fafafa;margin-bottom:-1px}
footer{padding:12px 24px;border-top:1px solid #ccc;font-size:.9em;color:#555}
footer a{margin-right:1em}
</style>
</head>
<body>
<header>
<h1>{{.Title}}</h1>
{{- if .Subtitle}}
<p>{{.Subtitle}}</p>
{{- end}}
</header>
{{- if .Nav}}
<nav>{{range .Nav}}<a href="{{.Href}}"{{if .Current}} class="current"{{end}}>{{.Label}}</a>{{end}}</nav>
{{- end}}
<main>
{{- range .Sections}}
<section>
{{- if .Heading}}
<h2>{{.Heading}}</h2>
{{- end}}
{{- if .Note}}
<p>{{.Note}}</p>
{{- end}}
{{- if .Rows}}
<table class="kv">
{{- range .Rows}}
<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{- end}}
</table>
{{- end}}
{{- with $t := .Table}}
<table>
{{- if .Header}}
<tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{- end}}
{{- if .Rows}}
{{- range $r, $row := .Rows}}
<tr>{{range $c, $cell := $row}}<td>{{with href $t $r $c}}<a href="{{.}}">{{$cell}}</a>{{else}}{{$cell}}{{end}}</td>{{end}}</tr>
{{- end}}
{{- else}}
<tr><td class="empty"{{if .Header}} colspan="{{len .Header}}"{{end}}>{{if .Empty}}{{.Empty}}{{else}}None{{end}}</td></tr>
{{- end}}
</table>
{{- end}}
</section>
{{- end}}
</main>
<footer><a href="/jmx">/jmx</a><a href="/conf">/conf</a><a href="/stacks">/stacks</a></footer>
</body>
</html>
`

// RenderPage writes p as a complete, self-contained HTML5 page (inline CSS, no
// JavaScript, no external resources), escaping all text (html/template), with a
// footer linking /jmx, /conf and /stacks. Sets Content-Type text/html; charset=utf-8.
func RenderPage(w http.ResponseWriter, p Page) {
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, p); err != nil {
		http.Error(w, "web: cannot render page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}
