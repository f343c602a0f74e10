package contract

import "github.com/capdir/capdir/api/answer"

// Type values: the only four legal values of the type column.
const (
	TypeFn    = "fn"
	TypeHTTP  = "http"
	TypeAgent = "agent"
	TypeFlow  = "flow"
)

// Row is one capability: the eighteen stored columns of the directory table plus
// RowNum. Its shape is declared in api/answer, which the Go client reads without
// the JSON Schema compiler; it is the same type here.
type Row = answer.Row
