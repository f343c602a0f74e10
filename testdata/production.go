package testdata

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ProductionCounts are the production directory's numbers the article reports
// (2026-07-26): rows by type, and how many are disabled, carry an input_schema,
// carry examples, are sensitive, or name a runner.
var ProductionCounts = struct {
	Rows, Fn, HTTP, Agent, Flow                            int
	Disabled, InputSchema, Examples, Sensitive, WithRunner int
}{891, 480, 303, 57, 51, 13, 256, 63, 227, 301}

// ProductionRows generates a directory shaped like the production table the
// article describes: ProductionCounts rows of each type and kind, 110
// categories, a few pinned seqs, timestamps as D1 prints them, created_at null on
// old rows. Each row is a map of the eighteen columns, SQL NULL as nil, as
// `wrangler d1 execute --json --command "SELECT * FROM directory"` returns them.
// The rows are the same on every call, in key order.
func ProductionRows() []map[string]any {
	c := ProductionCounts
	types := make([]string, 0, c.Rows)
	for _, n := range []struct {
		t string
		n int
	}{{"fn", c.Fn}, {"http", c.HTTP}, {"agent", c.Agent}, {"flow", c.Flow}} {
		for range n.n {
			types = append(types, n.t)
		}
	}
	rows := make([]map[string]any, c.Rows)
	for i, t := range types {
		rows[i] = productionRow(i, t)
	}
	return rows
}

func productionRow(i int, typ string) map[string]any {
	c := ProductionCounts
	key := fmt.Sprintf("%s_CAP_%04d", strings.ToUpper(typ), i)
	row := map[string]any{
		"key": key, "type": typ, "target": nil, "auth": nil, "content": nil,
		"updated_at": fmt.Sprintf("2026-06-%02d %02d:%02d:52", 1+i%28, i%24, i%60), "category": fmt.Sprintf("cat%03d", i%110),
		"allowed_categories": nil, "seq": nil, "enabled": 1, "planner_visible": 1, "planner_rank": 100,
		"input_schema": nil, "examples": nil, "sensitive": 0, "runner": nil, "includes": nil, "created_at": nil,
	}
	what := "# WHAT: capability " + strings.ToLower(key) + ".\n# ARGS: $1=text"
	switch typ {
	case "fn":
		row["target"], row["content"] = "echo", what+"\n[\"$1\"]"
	case "http":
		row["target"], row["auth"] = "GET https://api.example.com/v1/items/$1", "bearer:EXAMPLE_API_KEY"
		row["content"] = what
	case "agent":
		row["target"], row["allowed_categories"], row["includes"] = "gw:openai/gpt-4.1-mini", "*", "BLOCK_VOICE,BLOCK_REASONING_A"
		row["content"] = "You answer questions about " + strings.ToLower(key) + " in one sentence."
	case "flow":
		row["target"], row["content"] = "", what+"\nFN_CAP_0000: $1 > FN_CAP_0001: $PREV"
	}
	if i < c.InputSchema {
		row["input_schema"] = `{"type":"object","properties":{"text":{"type":"string","maxLength":200}},"required":["text"]}`
	}
	if i < c.Sensitive { // every sensitive row has a schema (the hygiene gate asks for one)
		row["sensitive"] = 1
	}
	if i%14 == 0 && i/14 < c.Examples {
		row["examples"] = `["hello","a|b"]`
	}
	if i%67 == 5 && i/67 < c.Disabled {
		row["enabled"] = 0
	}
	if i >= c.Rows-c.WithRunner {
		row["runner"] = typ
	}
	if i%100 == 7 {
		row["seq"], row["planner_rank"] = int64(i/100+1), 10
	}
	if i%3 == 0 {
		row["created_at"] = "2026-05-01 00:00:00"
	}
	return row
}

// DirectoryTableSQL is the production table's CREATE TABLE, as the article reads
// it back from D1 (its six first columns, then those added by ALTER TABLE).
const DirectoryTableSQL = `CREATE TABLE directory (
key TEXT PRIMARY KEY,
type TEXT NOT NULL CHECK (type IN ('fn','http','agent','flow')),
target TEXT,
auth TEXT,
content TEXT,
updated_at TEXT NOT NULL
, category TEXT, allowed_categories TEXT, seq INTEGER, enabled INTEGER DEFAULT 1,
planner_visible INTEGER DEFAULT 1, planner_rank INTEGER DEFAULT 100,
input_schema TEXT, examples TEXT, sensitive INTEGER DEFAULT 0, runner TEXT,
includes TEXT, created_at TEXT)`

// directoryColumns is the table's column order.
var directoryColumns = []string{"key", "type", "target", "auth", "content", "updated_at", "category", "allowed_categories", "seq",
	"enabled", "planner_visible", "planner_rank", "input_schema", "examples", "sensitive", "runner", "includes", "created_at"}

// D1JSON is rows as `wrangler d1 execute --json --command "SELECT * FROM
// directory"` prints them: an array of one result object.
func D1JSON(rows []map[string]any) []byte {
	out, err := json.MarshalIndent([]any{map[string]any{
		"results": rows, "success": true,
		"meta": map[string]any{"served_by": "v3-prod", "duration": 1.5, "changes": 0, "rows_read": len(rows), "rows_written": 0},
	}}, "", "  ")
	if err != nil {
		panic(err) // maps of strings, numbers and nil
	}
	return out
}

// SQLDump is rows as `wrangler d1 export` writes a table: the CREATE TABLE, then
// one INSERT a row.
func SQLDump(rows []map[string]any) string {
	var b strings.Builder
	b.WriteString("PRAGMA defer_foreign_keys=TRUE;\n" + DirectoryTableSQL + ";\n")
	for _, r := range rows {
		vals := make([]string, len(directoryColumns))
		for i, c := range directoryColumns {
			switch v := r[c].(type) {
			case nil:
				vals[i] = "NULL"
			case string:
				vals[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
			default:
				vals[i] = fmt.Sprint(v)
			}
		}
		b.WriteString(`INSERT INTO "directory" VALUES(` + strings.Join(vals, ",") + ");\n")
	}
	return b.String()
}
