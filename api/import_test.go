package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/testdata"
)

type page struct {
	Rows   []contract.Row `json:"rows"`
	Total  int            `json:"total"`
	Limit  int            `json:"limit"`
	Offset int            `json:"offset"`
}

// fixtureRows is the reference fixture decoded, keyed by key.
func fixtureRows(t *testing.T) map[string]contract.Row {
	t.Helper()
	var rows []contract.Row
	if err := json.Unmarshal(testdata.SampleRows(), &rows); err != nil {
		t.Fatal(err)
	}
	m := map[string]contract.Row{}
	for _, r := range rows {
		m[r.Key] = r
	}
	return m
}

// sameContract compares two rows on every column but the timestamps and row_num.
func sameContract(a, b contract.Row) bool {
	a.UpdatedAt, a.CreatedAt, a.RowNum = "", "", 0
	b.UpdatedAt, b.CreatedAt, b.RowNum = "", "", 0
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func TestImportSampleFixture(t *testing.T) {
	n := nodetest.Start(t, nil)
	before := nodetest.ControlSeq(t, n)
	status, body := send(t, n, "POST", "/api/directory/import", "application/json", string(testdata.SampleRows()))
	if status != http.StatusOK || strings.TrimSpace(body) != `{"ok":6,"failed":[]}` {
		t.Fatalf("import: HTTP %d %s", status, body)
	}
	if got := nodetest.ControlSeq(t, n); got != before+6 {
		t.Fatalf("import appended %d events, want 6", got-before)
	}

	// Visible at once, in canonical order, equal to the fixture.
	var p page
	decode(t, mustDo(t, n, http.StatusOK, "GET", "/api/directory", ""), &p)
	want := fixtureRows(t)
	order := []string{"BLOOIO_FINISH", "DIR_PATCH", "GROK_MODELS", "NOW", "PROMPT_LAB_AGENT", "ZZ_TEST_TEMPERATURE"}
	if p.Total != 6 || len(p.Rows) != 6 || p.Limit != 100 || p.Offset != 0 {
		t.Fatalf("list: total %d rows %d limit %d offset %d", p.Total, len(p.Rows), p.Limit, p.Offset)
	}
	for i, r := range p.Rows {
		if r.Key != order[i] || r.RowNum != i+1 {
			t.Errorf("row %d: %s row_num %d, want %s %d", i, r.Key, r.RowNum, order[i], i+1)
		}
		if !sameContract(r, want[r.Key]) {
			t.Errorf("%s imported as %+v, fixture %+v", r.Key, r, want[r.Key])
		}
		if ms := nodetest.Mutations(t, n, r.Key); len(ms) != 1 || ms[0].Action != contract.ActionCreate {
			t.Errorf("%s: mutations %+v", r.Key, ms)
		}
	}

	// Again, without upsert: every row fails with "exists", nothing is appended.
	before = nodetest.ControlSeq(t, n)
	var res command.ImportResult
	status, body = send(t, n, "POST", "/api/directory/import", "application/json", string(testdata.SampleRows()))
	decode(t, body, &res)
	if status != http.StatusOK || res.OK != 0 || len(res.Failed) != 6 {
		t.Fatalf("second import: HTTP %d %s", status, body)
	}
	for i, f := range res.Failed {
		if f.Index != i || f.Key != fixtureOrder[i] || !strings.HasPrefix(f.Error, "exists: "+f.Key+" is already in the directory") {
			t.Errorf("failure %d: %+v", i, f)
		}
	}
	if nodetest.ControlSeq(t, n) != before {
		t.Fatal("a refused import appended")
	}

	// With upsert: rows equal to the stored ones append nothing; a changed row
	// is replaced, created_at surviving.
	status, body = send(t, n, "POST", "/api/directory/import?mode=upsert", "application/json", string(testdata.SampleRows()))
	if status != http.StatusOK || strings.TrimSpace(body) != `{"ok":6,"unchanged":6,"failed":[]}` {
		t.Fatalf("upsert import: HTTP %d %s", status, body)
	}
	if nodetest.ControlSeq(t, n) != before {
		t.Fatal("an upsert of unchanged rows appended")
	}
	var nowBefore contract.Row
	decode(t, mustDo(t, n, http.StatusOK, "GET", "/api/directory/NOW", ""), &nowBefore)
	changed := strings.Replace(string(testdata.SampleRows()), `"category": "time",`, `"category": "moved",`, 1)
	if changed == string(testdata.SampleRows()) {
		t.Fatal("the fixture's NOW row is not where the test changes it")
	}
	status, body = send(t, n, "POST", "/api/directory/import?mode=upsert", "application/json", changed)
	if status != http.StatusOK || strings.TrimSpace(body) != `{"ok":6,"unchanged":5,"failed":[]}` {
		t.Fatalf("upsert import of one changed row: HTTP %d %s", status, body)
	}
	var nowAfter contract.Row
	decode(t, mustDo(t, n, http.StatusOK, "GET", "/api/directory/NOW", ""), &nowAfter)
	if nowAfter.CreatedAt != nowBefore.CreatedAt || nowAfter.Category != "moved" {
		t.Fatalf("NOW after upsert: %+v", nowAfter)
	}
	if ms := nodetest.Mutations(t, n, "NOW"); len(ms) != 2 || ms[1].Action != contract.ActionReplace {
		t.Fatalf("NOW mutations after upsert: %+v", ms)
	}
}

// fixtureOrder is the order of the rows in sample_rows.json.
var fixtureOrder = []string{"NOW", "GROK_MODELS", "PROMPT_LAB_AGENT", "BLOOIO_FINISH", "DIR_PATCH", "ZZ_TEST_TEMPERATURE"}

// NDJSON (by content type or by sniffing): each bad row fails alone, with its index,
// line, key and a message that says what to fix; the good rows are written.
func TestImportNDJSONReportsEachBadRow(t *testing.T) {
	n := nodetest.Start(t, nil)
	mustDo(t, n, http.StatusCreated, "POST", "/api/directory", fmt.Sprintf(compliantRow, "PRESENT"))
	lines := []string{
		`{"key":"GOOD_1","type":"fn","target":"now"}`,
		`{"key":"BAD_TYPE","type":"lambda"}`,
		``,
		`{"key":"BROKEN",`,
		`{"key":"GOOD_1","type":"fn"}`,
		`{"key":"RISKY","type":"fn","sensitive":1,"content":"# WHAT: risky"}`,
		`{"key":"PRESENT","type":"fn"}`,
		`{"key":"BAD.KEY","type":"fn"}`,
		`  {"key":"GOOD_2","type":"agent","content":"You are terse."}  `,
	}
	for _, ct := range []string{"application/x-ndjson", ""} {
		t.Run("content-type="+ct, func(t *testing.T) {
			if ct == "" {
				for _, k := range []string{"GOOD_1", "GOOD_2"} {
					mustDo(t, n, http.StatusOK, "DELETE", "/api/directory/"+k, "")
				}
			}
			before := nodetest.ControlSeq(t, n)
			status, body := send(t, n, "POST", "/api/directory/import", ct, strings.Join(lines, "\n")+"\n")
			var res command.ImportResult
			decode(t, body, &res)
			if status != http.StatusOK || res.OK != 2 || len(res.Failed) != 6 {
				t.Fatalf("HTTP %d %s", status, body)
			}
			if got := nodetest.ControlSeq(t, n); got != before+2 {
				t.Fatalf("appended %d events, want 2", got-before)
			}
			wants := []struct {
				index, line int
				key, err    string
			}{
				{1, 2, "BAD_TYPE", `type: must be one of fn, http, agent, flow; got "lambda"`},
				{2, 4, "", "malformed JSON"},
				{3, 5, "GOOD_1", "exists: GOOD_1 appears earlier in this import, at index 0"},
				{4, 6, "RISKY", "registry_hygiene_refused: high_risk_missing_schema"},
				{5, 7, "PRESENT", "exists: PRESENT is already in the directory (import with ?mode=upsert to replace it)"},
				{6, 8, "BAD.KEY", "key: must be 1 to 128 characters"},
			}
			for i, w := range wants {
				f := res.Failed[i]
				if f.Index != w.index || f.Line != w.line || f.Key != w.key || !strings.HasPrefix(f.Error, w.err) {
					t.Errorf("failure %d = %+v, want %+v", i, f, w)
				}
			}
			if res.Failed[3].HowToFix == "" {
				t.Error("a hygiene refusal carries no how_to_fix")
			}
			for _, k := range []string{"GOOD_1", "GOOD_2"} {
				mustDo(t, n, http.StatusOK, "GET", "/api/directory/"+k, "")
			}
		})
	}
}

// In upsert mode a key repeated in one import is written twice, in body order; a
// replacing row meets every hygiene gate of a PUT.
func TestImportUpsertRepeatedKeyAndHygiene(t *testing.T) {
	n := nodetest.Start(t, nil)
	mustDo(t, n, http.StatusCreated, "POST", "/api/directory", fmt.Sprintf(compliantRow, "PRESENT"))
	body := `[
		{"key":"TWICE","type":"fn","planner_rank":1},
		{"key":"TWICE","type":"fn","planner_rank":2,"content":"# WHAT: second"},
		{"key":"PRESENT","type":"fn"},
		{"key":"PRESENT","type":"fn","content":"# WHAT: replaced","category":"new"},
		42
	]`
	status, got := send(t, n, "POST", "/api/directory/import?mode=upsert", "application/json", body)
	var res command.ImportResult
	decode(t, got, &res)
	if status != http.StatusOK || res.OK != 3 || len(res.Failed) != 2 {
		t.Fatalf("HTTP %d %s", status, got)
	}
	if f := res.Failed[0]; f.Index != 2 || f.Key != "PRESENT" || f.Error != "registry_hygiene_refused: missing_description" || f.HowToFix == "" {
		t.Errorf("failure 0 = %+v", f)
	}
	if f := res.Failed[1]; f.Index != 4 || !strings.Contains(f.Error, "must be a JSON object") {
		t.Errorf("failure 1 = %+v", f)
	}
	var row contract.Row
	decode(t, mustDo(t, n, http.StatusOK, "GET", "/api/directory/TWICE", ""), &row)
	if row.PlannerRank != 2 || row.Content != "# WHAT: second" {
		t.Errorf("TWICE = %+v", row)
	}
	if ms := nodetest.Mutations(t, n, "TWICE"); len(ms) != 2 || ms[0].Action != contract.ActionCreate || ms[1].Action != contract.ActionReplace {
		t.Errorf("TWICE mutations %+v", ms)
	}
	decode(t, mustDo(t, n, http.StatusOK, "GET", "/api/directory/PRESENT", ""), &row)
	if row.Category != "new" {
		t.Errorf("PRESENT = %+v", row)
	}
}

func TestListFiltersAndPaging(t *testing.T) {
	n := nodetest.Start(t, nil)
	mustDo(t, n, http.StatusOK, "POST", "/api/directory/import", string(testdata.SampleRows()))
	mustDo(t, n, http.StatusOK, "PATCH", "/api/directory/DIR_PATCH", `{"enabled":0}`)
	mustDo(t, n, http.StatusOK, "PATCH", "/api/directory/ZZ_TEST_TEMPERATURE", `{"seq":1}`)

	keys := func(p page) string {
		var ks []string
		for _, r := range p.Rows {
			ks = append(ks, fmt.Sprintf("%d:%s", r.RowNum, r.Key))
		}
		return strings.Join(ks, ",")
	}
	cases := []struct {
		query, want          string
		total, limit, offset int
	}{
		{"", "1:ZZ_TEST_TEMPERATURE,2:BLOOIO_FINISH,3:DIR_PATCH,4:GROK_MODELS,5:NOW,6:PROMPT_LAB_AGENT", 6, 100, 0},
		{"?type=http", "1:ZZ_TEST_TEMPERATURE,3:DIR_PATCH,4:GROK_MODELS", 3, 100, 0},
		{"?category=grok", "4:GROK_MODELS", 1, 100, 0},
		{"?enabled=0", "3:DIR_PATCH", 1, 100, 0},
		{"?enabled=1&type=http", "1:ZZ_TEST_TEMPERATURE,4:GROK_MODELS", 2, 100, 0},
		{"?limit=2&offset=2", "3:DIR_PATCH,4:GROK_MODELS", 6, 2, 2},
		{"?limit=2&offset=5", "6:PROMPT_LAB_AGENT", 6, 2, 5},
		{"?offset=10", "", 6, 100, 10},
		{"?limit=5000", "1:ZZ_TEST_TEMPERATURE,2:BLOOIO_FINISH,3:DIR_PATCH,4:GROK_MODELS,5:NOW,6:PROMPT_LAB_AGENT", 6, 1000, 0},
		{"?category=none", "", 0, 100, 0},
	}
	for _, tc := range cases {
		var p page
		body := mustDo(t, n, http.StatusOK, "GET", "/api/directory"+tc.query, "")
		decode(t, body, &p)
		if keys(p) != tc.want || p.Total != tc.total || p.Limit != tc.limit || p.Offset != tc.offset {
			t.Errorf("GET %s: %s total %d limit %d offset %d; want %s %d %d %d",
				tc.query, keys(p), p.Total, p.Limit, p.Offset, tc.want, tc.total, tc.limit, tc.offset)
		}
		if p.Rows == nil || !strings.Contains(body, `"rows":[`) {
			t.Errorf("GET %s: rows is not an array: %s", tc.query, body)
		}
	}
}

// TestImportLarge measures the import of many generated rows. It runs when
// CAPDIR_IMPORT_ROWS is set, e.g.
//
//	CAPDIR_IMPORT_ROWS=100000 go test -run TestImportLarge -v ./api/
func TestImportLarge(t *testing.T) {
	rows, _ := strconv.Atoi(os.Getenv("CAPDIR_IMPORT_ROWS"))
	if rows <= 0 {
		t.Skip("set CAPDIR_IMPORT_ROWS to run")
	}
	n := nodetest.Start(t, nil)
	var b strings.Builder
	for i := range rows {
		fmt.Fprintf(&b, `{"key":"GEN_%07d","type":"http","target":"GET https://example.com/items/$1?page=$2","auth":"bearer:EXAMPLE_KEY","category":"gen%02d","content":"# WHAT: Generated capability %d.\n# ARGS: $1=item | $2=page\n# EX: [GEN_%07d]1|2[/GEN_%07d]","examples":"[\"1|2\"]"}`+"\n",
			i, i%100, i, i, i)
	}
	t.Logf("body: %d rows, %.1f MiB of NDJSON", rows, float64(b.Len())/(1<<20))
	start := time.Now()
	status, body := send(t, n, "POST", "/api/directory/import", "application/x-ndjson", b.String())
	el := time.Since(start)
	if status != http.StatusOK || strings.TrimSpace(body) != fmt.Sprintf(`{"ok":%d,"failed":[]}`, rows) {
		t.Fatalf("HTTP %d %.300s", status, body)
	}
	t.Logf("imported %d rows in %s (%.0f rows/s), all visible on return", rows, el.Round(time.Millisecond), float64(rows)/el.Seconds())
	var p page
	decode(t, mustDo(t, n, http.StatusOK, "GET", "/api/directory?limit=1&category=gen07", ""), &p)
	if p.Total != (rows+92)/100 {
		t.Errorf("category gen07 has %d rows", p.Total)
	}
}
