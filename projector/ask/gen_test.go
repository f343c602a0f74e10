package ask_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/testdata"
)

// sampleRows returns the six rows of testdata/sample_rows.json.
func sampleRows(t testing.TB) []contract.Row {
	t.Helper()
	var rows []contract.Row
	if err := json.Unmarshal(testdata.SampleRows(), &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// Vocabularies of generated rows. Several words of the asks the tests make
// (temperature, current, coordinate, time, list, models…) are among them, so
// distractors match parts of every ask.
var (
	genDomains = []string{"weather", "invoice", "payment", "customer", "order", "ticket", "deploy", "metric",
		"report", "email", "calendar", "file", "image", "video", "translation", "stock", "crypto", "map",
		"geocode", "sms", "github", "slack", "database", "user", "search", "news", "shipping", "inventory",
		"recipe", "flight", "hotel", "music", "sensor", "device", "log", "backup", "dns", "certificate",
		"currency", "model"}
	genVerbs = []string{"get", "list", "create", "update", "delete", "search", "send", "fetch", "convert",
		"check", "count", "export", "import", "sync", "resolve", "summarize", "translate", "validate",
		"schedule", "cancel", "compute", "render", "estimate", "archive", "watch", "rank", "tag", "price",
		"notify", "measure"}
	genNouns = []string{"status", "history", "summary", "detail", "usage", "price", "rate", "forecast",
		"balance", "record", "entry", "message", "event", "alert", "item", "account", "region", "location",
		"address", "city", "temperature", "coordinate", "time", "zone", "date", "schedule", "model",
		"version", "release", "commit", "branch", "label", "owner", "team", "quota", "limit", "token",
		"session", "page", "document", "thumbnail", "caption", "transcript", "language", "route", "distance",
		"humidity", "pressure", "wind", "reading", "battery", "firmware", "volume", "playlist", "booking",
		"seat", "fare", "room", "review", "ingredient", "nutrition"}
	genQuals = []string{"current", "daily", "hourly", "latest", "public", "private", "live", "total",
		"recent", "monthly", "weekly", "historical", "average", "pending", "active", "archived", "default",
		"local", "remote", "raw"}
	genProviders = []string{"Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark",
		"Wayne", "Cyberdyne", "Tyrell", "Soylent", "Wonka", "Gringotts", "Oscorp", "Monarch", "Massive",
		"Aperture", "Black Mesa", "Virtucon", "Nakatomi"}
)

// genRows returns n generated rows, deterministic for a seed: keys like
// WEATHER_GET_FORECAST_00042, with a docstring of every tag built from the
// vocabularies above, a category (the domain), and a planner_rank.
func genRows(seed uint64, n int) []contract.Row {
	rng := rand.New(rand.NewPCG(seed, 99))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	rows := make([]contract.Row, n)
	for i := range rows {
		dom, verb, noun, noun2, qual := pick(genDomains), pick(genVerbs), pick(genNouns), pick(genNouns), pick(genQuals)
		key := strings.ToUpper(fmt.Sprintf("%s_%s_%s_%05d", dom, verb, noun, i))
		content := fmt.Sprintf("# WHAT: %s the %s %s of a %s %s, from the %s API.\n"+
			"# WHEN_TO_USE: a capability needs the %s %s %s.\n"+
			"# ARGS: $1=%s | $2=%s\n# EX: [%s]x|y[/%s]\n# OUTPUT: JSON with %s.%s\n# %s %s notes.",
			titleCase(verb), qual, noun, dom, noun2, pick(genProviders), qual, dom, noun,
			noun2, pick(genNouns), key, key, noun, pick(genNouns), pick(genQuals), pick(genNouns))
		rows[i] = contract.Row{Key: key, Type: "http", Target: "GET https://api.example.com/" + strings.ToLower(key),
			Content: content, Category: dom, Enabled: 1, PlannerVisible: 1, PlannerRank: 100 - 50*(i%2)}
	}
	return rows
}

func titleCase(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
