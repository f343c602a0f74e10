package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/capdir/capdir/contract/failure"
)

// Bounds of a document's row-specific parts, so that a document stays close to its
// scaffolding's size whatever the row holds. A part cut short ends with "…".
const (
	// DocLineCap bounds each docstring line a document quotes (capability, when to
	// use, args, output) and a registry entry's description and args, in bytes.
	DocLineCap = 240
	// DocExampleCap bounds the example's arguments. A longer example is quoted cut
	// short, and the document has no RUN NOW URL (it would fire a different call).
	DocExampleCap = 240
	// DocSchemaCap bounds the input_schema a document inlines (compacted). A larger
	// schema is named by its size instead.
	DocSchemaCap = 1024
	// docCategoryCap bounds the category as a path level.
	docCategoryCap = 64
)

// PathRoot is the first level of every document's path: the directory itself.
const PathRoot = "capdir"

// DocContext is what a document needs besides its row.
type DocContext struct {
	// BaseURL is the server's public base URL, e.g. "https://capdir.example"; every
	// URL of the document starts with it. When empty, the URLs are paths.
	BaseURL string
	// Viewer is the reader: the document's affordances are computed for it.
	Viewer Viewer
	// Auth is what the row's auth column reads, as the runner's auth code parses
	// it: the form and the variable names, never a value.
	Auth AuthInfo
	// BreakerOpen is the literal a call to the row answers while its breaker is
	// open (breaker.Message); breaker.Message with the default threshold when empty.
	BreakerOpen string
	// Failures is the failure table of the row's runner (runner.Runners.Failures):
	// the document's troubleshooting lists the entries it marks for the row's
	// kind of credential (failure.Doc). Nil lists none of the runner's literals.
	Failures failure.Table
}

// AuthInfo describes a row's auth column without any value it could hold.
type AuthInfo struct {
	// Form is the credential form (bearer, basic, headers, query, oauth); empty
	// when the row names no credential.
	Form string
	// Variables are the environment variables the credential is read from.
	Variables []string
	// Malformed is set when the runner refuses the auth column (an unknown
	// prefix, a malformed spec): every call fails before its upstream.
	Malformed bool
}

// Document is one row's contract, written for a reader who knows nothing else:
// the blocks of GET /api/dispatch?key=KEY&format=json, which Markdown renders as
// text. Its field names are stable.
type Document struct {
	Key string `json:"key"`
	// Formats are the URLs of this document in each projection: the same blocks.
	Formats DocFormats `json:"formats"`
	// Path is root > category > key, so a reader can climb to the row's siblings,
	// which Siblings lists.
	Path     []string `json:"path"`
	Siblings string   `json:"siblings"`
	// Capability and WhenToUse are the # WHAT and # WHEN_TO_USE lines of content.
	Capability string `json:"capability"`
	WhenToUse  string `json:"when_to_use"`
	// RunNow is one URL that fires the example call (GET /api/dispatch?key=…&body=…);
	// empty when the example is longer than DocExampleCap.
	RunNow string `json:"run_now"`
	// ExampleCall is the router tag form, [KEY]args[/KEY], with the example's args.
	ExampleCall string  `json:"example_call"`
	Type        string  `json:"type"`
	Runner      string  `json:"runner"`
	Auth        DocAuth `json:"auth"`
	Risk        DocRisk `json:"risk"`
	// Inputs is the argument contract: the ARGS line and the input_schema.
	Inputs DocInputs `json:"inputs"`
	// Outputs is the OUTPUT line, or what the runner returns when there is none.
	Outputs         string         `json:"outputs"`
	Affordances     DocAffordances `json:"affordances"`
	MachineContract []string       `json:"machine_contract"`
	Invocation      DocInvocation  `json:"invocation"`
	// Troubleshooting is four failures this row can meet, each with its action.
	Troubleshooting []DocProblem `json:"troubleshooting"`
}

// DocFormats are the URLs of a document as Markdown and as JSON.
type DocFormats struct {
	Markdown string `json:"markdown"`
	JSON     string `json:"json"`
}

// DocAuth tells a caller whether the row needs a credential: by name, never value.
type DocAuth struct {
	Required  bool     `json:"required"`
	Form      string   `json:"form"`
	Variables []string `json:"variables"`
	Note      string   `json:"note"`
}

// DocRisk is the row's risk and what it takes a token holder to invoke it.
type DocRisk struct {
	Level          string `json:"level"`
	ApprovalNeeded bool   `json:"approval_needed"`
	Note           string `json:"note"`
}

// DocInputs is the argument contract.
type DocInputs struct {
	Args        string          `json:"args"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	Note        string          `json:"note,omitempty"`
}

// DocAffordances are the moves the reader's credential can make on the row.
type DocAffordances struct {
	Credential string   `json:"credential"`
	Can        []string `json:"can"`
	Cannot     []string `json:"cannot"`
	Note       string   `json:"note"`
}

// Moves a credential can make, as DocAffordances names them.
const (
	MoveRead              = "read"
	MoveInvoke            = "invoke"
	MoveEdit              = "edit"
	MoveDelete            = "delete"
	MoveMintTokens        = "mint_tokens"
	MoveReadPublicReceipt = "read_public_receipt"
)

// DocInvocation closes the loop after a call: where to call, where the ledger and
// the receipts are, how to replay and how to repair.
type DocInvocation struct {
	Invoke   string `json:"invoke"`
	Ledger   string `json:"ledger"`
	Receipt  string `json:"receipt"`
	Replay   string `json:"replay"`
	Repair   string `json:"repair"`
	Contract string `json:"contract"`
}

// DocProblem is one failure: its literal symptom, its cause, what to do, and where.
type DocProblem struct {
	Symptom string `json:"symptom"`
	Cause   string `json:"cause"`
	Action  string `json:"action"`
	URL     string `json:"url"`
}

// machineContract is the same four imperatives in every document.
var machineContract = []string{
	"Do not infer the row shape from memory: use only the arguments, URLs and outputs written here, and fetch this document again when in doubt.",
	"Send the arguments as one string in ARGS order, separated by |; only the last argument may contain |.",
	"Treat a result that begins with ERR: or carries \"error\" as a failure: find it under Troubleshooting and act on it before retrying.",
	"Never report a call as done without its invocation_id; the server writes the receipt, check it there.",
}

// NewDocument builds r's document for ctx. It reads nothing but its arguments and
// never sees a credential value: auth appears as its form and variable names.
func NewDocument(r *Row, ctx DocContext) Document {
	doc := ParseDoc(r.Content)
	u := docURLs{base: strings.TrimRight(ctx.BaseURL, "/"), key: r.Key}
	args, _ := ExampleArgs(r)
	d := Document{
		Key:         r.Key,
		Formats:     DocFormats{Markdown: "GET " + u.document("markdown"), JSON: "GET " + u.document("json")},
		Path:        []string{PathRoot, pathCategory(r.Category), r.Key},
		Siblings:    u.siblings(r.Category),
		Capability:  orNone(clip(Description(r), DocLineCap)),
		WhenToUse:   orNone(clip(doc.WhenToUse, DocLineCap)),
		ExampleCall: "[" + r.Key + "]" + clip(args, DocExampleCap) + "[/" + r.Key + "]",
		Type:        r.Type,
		Runner:      r.EffectiveRunner(),
		Auth:        docAuth(ctx.Auth),
		Risk:        docRisk(r),
		Inputs:      docInputs(r, doc),
		Outputs:     docOutputs(r.EffectiveRunner(), doc.Output),
		Affordances: affordances(ctx.Viewer, r),

		MachineContract: machineContract,
		Invocation:      u.invocation(Fingerprint(r)),
	}
	if len(args) > DocExampleCap {
		args = "" // a URL with the example cut short would fire another call
	} else {
		d.RunNow = u.run(args, false)
	}
	d.Troubleshooting = troubleshooting(r, d.Auth, u, args, ctx)
	return d
}

// ExampleArgs is the row's first example: the first entry of examples, else the
// text between [KEY] and [/KEY] on the # EX: line. ok is false when there is none
// (the example is then the empty argument string).
func ExampleArgs(r *Row) (args string, ok bool) {
	var list []string
	if json.Unmarshal([]byte(r.Examples), &list) == nil && len(list) > 0 {
		return list[0], true
	}
	ex := ParseDoc(r.Content).Ex
	open, closing := "["+r.Key+"]", "[/"+r.Key+"]"
	i := strings.Index(ex, open)
	if i < 0 {
		return "", false
	}
	rest := ex[i+len(open):]
	j := strings.LastIndex(rest, closing)
	if j < 0 {
		return "", false
	}
	return rest[:j], true
}

func pathCategory(c string) string {
	if c == "" {
		return "(no category)"
	}
	return clip(c, docCategoryCap)
}

// envNameShape is what an environment variable's name looks like. A name of any
// other shape is not quoted: it may be a value pasted where a name belongs.
var envNameShape = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// authMalformed is DocAuth.Form for an auth column the runner refuses.
const authMalformed = "malformed"

// notAName stands in for a variable name that is not quoted.
const notAName = "<not a variable name>"

func docAuth(a AuthInfo) DocAuth {
	names := make([]string, len(a.Variables))
	for i, n := range a.Variables {
		names[i] = n
		if !envNameShape.MatchString(n) {
			names[i] = notAName
		}
	}
	d := DocAuth{Form: a.Form, Variables: dedupe(names)}
	switch {
	case a.Malformed:
		d.Required, d.Form = true, authMalformed
		d.Note = "the auth column is malformed: every call fails with ERR:http:<KEY>:ERR:auth:… before its upstream; the owner repairs it."
	case a.Form == "":
		d.Note = "no credential: nothing is added to the call."
	default:
		d.Required = true
		d.Note = "the server reads " + strings.Join(d.Variables, ", ") + " from its environment at call time; you never send it and no answer shows it."
	}
	return d
}

func docRisk(r *Row) DocRisk {
	if r.Risk() == RiskHigh {
		return DocRisk{Level: RiskHigh, ApprovalNeeded: true, Note: "sensitive, approval needed: a token holder needs a token the owner minted with risk ceiling high."}
	}
	return DocRisk{Level: RiskLow, Note: "no approval needed: any credential whose scope covers the row may invoke it."}
}

func docInputs(r *Row, doc Doc) DocInputs {
	in := DocInputs{Args: orDefault(clip(doc.Args, DocLineCap), "see content")}
	if r.InputSchema == "" {
		in.Note = "no input_schema: arguments are not typed; the runner or the upstream rejects a bad call."
		return in
	}
	var buf bytes.Buffer
	switch err := json.Compact(&buf, []byte(r.InputSchema)); {
	case err != nil:
		in.Note = "the input_schema is not valid JSON; the owner repairs it."
	case buf.Len() > DocSchemaCap:
		in.Note = "an input_schema of " + strconv.Itoa(buf.Len()) + " bytes (too long to quote) checks the body before any runner."
	default:
		in.InputSchema = buf.Bytes()
		in.Note = "the body is checked against input_schema before any runner."
	}
	return in
}

// runnerOutputs is what each runner returns, for a row without an # OUTPUT: line.
var runnerOutputs = map[string]string{
	TypeFn:    "the function's result, as text",
	TypeHTTP:  "HTTP <status>:<body>, the upstream's answer",
	TypeAgent: "the model's reply, as text",
	TypeFlow:  "the last step's output",
	"nats":    "the reply of the service on the subject, as text",
}

func docOutputs(runner, output string) string {
	if output != "" {
		return clip(output, DocLineCap)
	}
	if s, ok := runnerOutputs[runner]; ok {
		return "not documented; " + s
	}
	return "not documented"
}

// affordances computes the moves v's credential can make on r.
func affordances(v Viewer, r *Row) DocAffordances {
	a := DocAffordances{Note: "Computed for the credential you presented; the server enforces scope and risk on every call regardless."}
	switch v.Role {
	case RoleOwner:
		a.Credential = "owner key (x-terminal-key)"
		a.Can = []string{MoveRead, MoveInvoke, MoveEdit, MoveDelete, MoveMintTokens}
	case RoleToken:
		a.Credential = "capability token, risk ceiling " + orDefault(v.Risk, RiskLow)
		a.Can = []string{MoveRead}
		if v.MayInvoke(r) {
			a.Can = append(a.Can, MoveInvoke)
		} else {
			a.Cannot = []string{MoveInvoke + " (risk_ceiling:" + orDefault(v.Risk, RiskLow) + "<row:" + r.Risk() + ")"}
		}
		a.Cannot = append(a.Cannot, MoveEdit, MoveDelete, MoveMintTokens)
	default:
		a.Credential = "none"
		a.Can = []string{MoveReadPublicReceipt}
		a.Cannot = []string{MoveRead, MoveInvoke, MoveEdit, MoveDelete, MoveMintTokens}
	}
	if a.Cannot == nil {
		a.Cannot = []string{}
	}
	return a
}

// docURLs builds the document's URLs for one key.
type docURLs struct{ base, key string }

func (u docURLs) dispatch() string { return u.base + "/api/dispatch" }

func (u docURLs) document(format string) string {
	return u.dispatch() + "?key=" + url.QueryEscape(u.key) + "&format=" + format
}

func (u docURLs) registry() string { return u.dispatch() + "?registry=1" }

// siblings lists the row's category, or the whole registry when the row has no
// category or one too long to quote.
func (u docURLs) siblings(category string) string {
	if category == "" || len(category) > docCategoryCap {
		return "GET " + u.registry()
	}
	return "GET " + u.registry() + "&category=" + url.QueryEscape(category)
}

// run is the GET form of a dispatch of args, in shape mode when shape is set.
func (u docURLs) run(args string, shape bool) string {
	s := u.dispatch() + "?key=" + url.QueryEscape(u.key) + "&body=" + url.QueryEscape(args)
	if shape {
		s += "&shape=true"
	}
	return s
}

func (u docURLs) ledger() string { return u.base + "/api/receipts?key=" + url.QueryEscape(u.key) }

func (u docURLs) repair() string { return u.base + "/api/directory/" + url.PathEscape(u.key) }

func (u docURLs) invocation(fingerprint string) DocInvocation {
	return DocInvocation{
		Invoke:   `POST ` + u.dispatch() + ` {"key":"` + u.key + `","body":"<args>"}; add "shape":true to build the call without sending it`,
		Ledger:   "GET " + u.ledger() + " (owner): this row's receipts, newest first",
		Receipt:  "GET " + u.base + "/receipt/{invocation_id} (public: no arguments, no result), or GET " + u.dispatch() + "?confirm={invocation_id}",
		Replay:   "POST the same key and body again; fingerprints.input and .contract on the two receipts show what changed",
		Repair:   "PATCH " + u.repair() + " (owner) with the fields to change",
		Contract: "sha256:" + fingerprint + " (fingerprints.contract on a receipt of this version)",
	}
}

// JSON is the document as GET /api/dispatch?key=KEY&format=json serves it: one
// compact object (no HTML escaping) and a newline.
func (d *Document) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("contract: document %s: %w", d.Key, err)
	}
	return buf.Bytes(), nil
}

// clip cuts s to at most n bytes on a character boundary, marking a cut with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orNone(s string) string { return orDefault(s, "not documented") }

func dedupe(names []string) []string {
	out := []string{}
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
