package runner

import (
	"strings"

	"github.com/capdir/capdir/contract"
)

// DescribeAuth is what a row's auth column reads, parsed as ApplyAuth parses it:
// the credential form and the variable names, for a contract document. The spec
// is read with an empty environment, so no value is ever looked up; a spec
// ApplyAuth refuses is Malformed.
func DescribeAuth(spec string) contract.AuthInfo {
	if strings.TrimSpace(spec) == "" {
		return contract.AuthInfo{}
	}
	cred, err := ApplyAuth(spec, MapEnv(nil), &OutboundRequest{})
	if err != nil {
		return contract.AuthInfo{Malformed: true}
	}
	return contract.AuthInfo{Form: cred.Form, Variables: cred.Names}
}
