package console_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/chromedp/chromedp"
)

// The browser tests drive headless Chromium against a real node. Without a
// Chromium they skip, saying how to run them; with CAPDIR_REQUIRE_BROWSER=1 (CI)
// a missing browser fails them. Each saves screenshots under its artifact
// directory (go test -artifacts), or $CAPDIR_SCREENSHOTS when set.

// browserPath is the Chromium to drive, "" when there is none.
func browserPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browserWait bounds one browser test, so a page that never shows what the test
// waits for fails it instead of hanging the run.
const browserWait = 4 * time.Minute

// tab is one browser tab on a node's console.
type tab struct {
	t    *testing.T
	ctx  context.Context
	base string
	mu   sync.Mutex
	logs []string // the console's messages: exceptions, CSP violations
}

// openTab starts Chromium (a fresh profile, no network but the node's) on n.
func openTab(t *testing.T, n *capdir.Node) *tab {
	t.Helper()
	path := browserPath()
	if path == "" {
		if os.Getenv("CAPDIR_REQUIRE_BROWSER") == "1" {
			t.Fatal("CAPDIR_REQUIRE_BROWSER=1 but no Chromium is installed: apt-get install -y chromium")
		}
		t.Skip("no Chromium: apt-get install chromium to run the console's browser tests (CAPDIR_REQUIRE_BROWSER=1 fails them instead)")
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 800))
	ctx, cancelCtx := chromedp.NewContext(alloc)
	if err := chromedp.Do(ctx); err != nil { // starts the browser, without a deadline of its own
		cancelCtx()
		cancelAlloc()
		t.Fatalf("start Chromium: %v", err)
	}
	tb := &tab{t: t, base: n.URL()}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || strings.Contains(m.Text, "Content Security Policy") || strings.Contains(m.Text, "Refused to") {
				tb.mu.Lock()
				tb.logs = append(tb.logs, m.String())
				tb.mu.Unlock()
			}
		}
	}()
	bounded, cancelWait := context.WithTimeout(ctx, browserWait)
	tb.ctx = bounded
	t.Cleanup(func() {
		tb.mu.Lock()
		for _, l := range tb.logs {
			t.Errorf("the page's console: %s", l)
		}
		tb.mu.Unlock()
		cancelWait()
		cancelCtx()
		cancelAlloc()
	})
	return tb
}

// do runs the steps, failing the test at the first that fails.
func (b *tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.shot("failed")
		b.t.Fatalf("%s: %v", what, err)
	}
}

// text is the text of the element sel.
func (b *tab) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// page is the document's HTML, checked for the owner key.
func (b *tab) page() string {
	b.t.Helper()
	html, err := chromedp.Run(b.ctx, chromedp.OuterHTML(chromedp.CSS("html")))
	if err != nil {
		b.t.Fatalf("page HTML: %v", err)
	}
	for _, l := range nodetest.FindSecrets("the page", []byte(html), ownerKey) {
		b.t.Errorf("the owner key leaked: %s", l)
	}
	return html
}

// shot saves a screenshot of the page as name.png.
func (b *tab) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	dir := os.Getenv("CAPDIR_SCREENSHOTS")
	if dir == "" {
		dir = b.t.ArtifactDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot %s", path)
}

// signIn signs in through the sign-in form, with the keyboard.
func (b *tab) signIn() {
	b.t.Helper()
	b.do("sign in",
		chromedp.Navigate(b.base+"/console/"),
		chromedp.WaitVisible(chromedp.ID("key")),
	)
	b.shot("signin")
	focused, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.activeElement.id`))
	if err != nil || focused != "key" {
		b.t.Errorf("the sign-in page focuses %q (%v), want the key field", focused, err)
	}
	b.do("type the key", chromedp.SendKeys(chromedp.ID("key"), nodetest.Key+"\r"), chromedp.WaitVisible(chromedp.ID("rows")))
	b.page()
	stored, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie`))
	if err != nil || stored != "{}{}" {
		b.t.Errorf("after sign-in the page keeps %q (%v), want nothing readable by script", stored, err)
	}
}

// go opens the console page at path and waits for sel.
func (b *tab) open(path, sel string) {
	b.t.Helper()
	b.do("open "+path, chromedp.Navigate(b.base+path), chromedp.WaitVisible(chromedp.CSS(sel)))
}
