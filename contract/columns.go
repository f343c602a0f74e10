package contract

// kind is how a column's JSON value is decoded.
type kind int

const (
	kindText     kind = iota // JSON string; null means empty (SQL NULL)
	kindFlag                 // 0/1 integer; also accepts true/false
	kindInt                  // JSON integer
	kindSeq                  // JSON integer or null
	kindReadOnly             // accepted and ignored (set by the server)
	kindList                 // like kindText, or a JSON array of strings stored as its JSON text
)

// column describes one field of a row as it appears in JSON.
type column struct {
	name string
	kind kind
	text func(*Row) *string // kindText, kindList
	num  func(*Row) *int    // kindFlag, kindInt
}

// columns lists every JSON field of a row in the documented column order, followed by
// the computed row_num. The index of a column is its bit in Fields.present.
var columns = []column{
	{name: "key", kind: kindText, text: func(r *Row) *string { return &r.Key }},
	{name: "type", kind: kindText, text: func(r *Row) *string { return &r.Type }},
	{name: "target", kind: kindText, text: func(r *Row) *string { return &r.Target }},
	{name: "auth", kind: kindText, text: func(r *Row) *string { return &r.Auth }},
	{name: "content", kind: kindText, text: func(r *Row) *string { return &r.Content }},
	{name: "updated_at", kind: kindReadOnly},
	{name: "category", kind: kindText, text: func(r *Row) *string { return &r.Category }},
	{name: "allowed_categories", kind: kindText, text: func(r *Row) *string { return &r.AllowedCategories }},
	{name: "seq", kind: kindSeq},
	{name: "enabled", kind: kindFlag, num: func(r *Row) *int { return &r.Enabled }},
	{name: "planner_visible", kind: kindFlag, num: func(r *Row) *int { return &r.PlannerVisible }},
	{name: "planner_rank", kind: kindInt, num: func(r *Row) *int { return &r.PlannerRank }},
	{name: "input_schema", kind: kindText, text: func(r *Row) *string { return &r.InputSchema }},
	{name: "examples", kind: kindList, text: func(r *Row) *string { return &r.Examples }},
	{name: "sensitive", kind: kindFlag, num: func(r *Row) *int { return &r.Sensitive }},
	{name: "runner", kind: kindText, text: func(r *Row) *string { return &r.Runner }},
	{name: "includes", kind: kindText, text: func(r *Row) *string { return &r.Includes }},
	{name: "created_at", kind: kindReadOnly},
	{name: "row_num", kind: kindReadOnly},
}

// columnIndex maps a JSON field name to its index in columns.
var columnIndex = func() map[string]int {
	m := make(map[string]int, len(columns))
	for i, c := range columns {
		m[c.name] = i
	}
	return m
}()

// copyColumn copies column i from src to dst. Read-only columns are not copied.
func copyColumn(i int, dst, src *Row) {
	c := columns[i]
	switch {
	case c.text != nil:
		*c.text(dst) = *c.text(src)
	case c.num != nil:
		*c.num(dst) = *c.num(src)
	case c.kind == kindSeq:
		dst.Seq = cloneSeq(src.Seq)
	}
}

func cloneSeq(p *int64) *int64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// fieldNames lists every accepted JSON field name, in column order.
func fieldNames() []string {
	names := make([]string, len(columns))
	for i, c := range columns {
		names[i] = c.name
	}
	return names
}

// ColumnNames lists the eighteen stored columns of the directory table, in its
// order (without the computed row_num).
func ColumnNames() []string {
	names := fieldNames()
	return names[:len(names)-1]
}
