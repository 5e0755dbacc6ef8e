#!/usr/bin/env bash
# Fails when the Go code generated from internal/proto/**/*.proto is out of date.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
go run ./internal/proto/gen -check
