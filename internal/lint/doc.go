// Package lint holds tests that make the design's dependency rules executable
// (DESIGN.md §3): pure cores import no net or os and never read the wall clock,
// roles never import each other, and the public client imports no server code.
// It has no non-test code.
package lint
