package agentrunner

import (
	"strings"
	"testing"
)

// An agent row's target is a model id, not a URL: the fix of a failure to reach
// the model server points at the provider's base URL, where the address is set.
func TestFetchFixNamesTheProvider(t *testing.T) {
	if !strings.Contains(failFetch.Fix, "--agent-provider") || strings.Contains(failFetch.Fix, "URL in target") {
		t.Errorf("ERR:agent:fetch fix = %q; want it to point at --agent-provider, not at a URL in target", failFetch.Fix)
	}
}
