package gate

import (
	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher/gate/token"
)

// The gate's literal refusals. Each is built from its entry, in errors.go,
// token_errors.go and input_errors.go, and nowhere else.
var (
	failUnknownKey = failure.Entry{
		Literal: `{"attempted":<key>,"did_you_mean":<keys>,"error":"unknown_key","ran":false}`, Fault: failure.FaultCall,
		Cause: "the key is not in the directory, or not in your scope (keys are case-sensitive)",
		Fix:   "use a did_you_mean entry, or pick a key from the registry",
	}
	failDisabled = failure.Entry{
		Literal: "ERR:disabled:<KEY>", Fault: failure.FaultRow,
		Cause: "the row is disabled",
		Fix:   "the owner enables it (PATCH enabled 1), or call another row",
	}
	failDirectory = failure.Entry{
		Literal: "ERR:directory:<error>", Fault: failure.FaultNode,
		Cause: "the row could not be read from the directory",
		Fix:   "call again once the node is healthy",
	}
	failBreakerUnreadable = failure.Entry{
		Literal: "ERR:breaker:<error>", Fault: failure.FaultNode,
		Cause: "the row's breaker could not be read, so the call was not run unchecked",
		Fix:   "call again once the node is healthy",
	}
	failRevocationUnknown = failure.Entry{
		Literal: "ERR:revocation:<error>", Fault: failure.FaultNode,
		Cause: "the worker could not find out whether the token was revoked, so the call was not run unchecked",
		Fix:   "call again once the control stream answers",
	}
	failScope = failure.Entry{
		Literal: "scope:<KEY>", Fault: failure.FaultCall,
		Cause: "the token's keys and categories do not include the row (a disabled row is in no category's scope)",
		Fix:   "ask the owner for a token that names the key or its category",
	}
	failContractChanged = failure.Entry{
		Literal: "contract_changed:<pinned>!=<current>", Fault: failure.FaultCall,
		Cause: "the token is pinned to a contract the row no longer has",
		Fix:   "read the row's document again, then ask the owner for a token pinned to its new fingerprint",
	}
	failRiskCeiling = failure.Entry{
		Literal: "risk_ceiling:<ceiling><row:<risk>", Fault: failure.FaultCall,
		Cause: "the row's risk is above the token's ceiling",
		Fix:   "ask the owner for a token with a higher risk ceiling",
	}
	failBodyFixed = failure.Entry{
		Literal: "body_fixed:<fixed>!=<sent>", Fault: failure.FaultCall,
		Cause: "the token fixes the body, and this call sent another (each the first 16 hex digits of its SHA-256)",
		Fix:   "send the body the token was minted for",
	}
	failTokenPayload = failure.Entry{
		Literal: "payload_ceiling:<size>><ceiling>", Fault: failure.FaultCall,
		Cause: "the body is over the token's payload ceiling",
		Fix:   "send less, or pass large data by reference",
	}
	failPayload = failure.Entry{
		Literal: "ERR:payload_too_large:<size>><ceiling>", Fault: failure.FaultCall,
		Cause: "the body is over the deployment's payload ceiling",
		Fix:   "send less, or pass large data by reference",
	}
	failSchemaUnusable = failure.Entry{
		Literal: "ERR:input_schema: <why>", Fault: failure.FaultRow,
		Cause: "the row's input_schema does not compile: the row is at fault, not the call",
		Fix:   "the owner repairs the input_schema",
	}
	failInput = failure.Entry{
		Literal: "ERR:input:<what is wrong>", Fault: failure.FaultCall,
		Cause: "the arguments do not satisfy the row's input_schema; nothing ran",
		Fix:   "send the arguments the input_schema asks for, as the message says",
	}
	failPendingApproval = failure.Entry{
		Literal: "approval_pending", Fault: failure.FaultCall,
		Cause: "the row is sensitive: the call waits for the owner's approval",
		Fix:   "wait: the receipt comes once the owner decides",
	}
	failApprovalDenied = failure.Entry{
		Literal: "approval_denied", Fault: failure.FaultCall,
		Cause: "the owner denied the call",
		Fix:   "nothing ran; ask the owner",
	}
	failApprovalExpired = failure.Entry{
		Literal: "approval_expired", Fault: failure.FaultCall,
		Cause: "the call's approval expired undecided",
		Fix:   "call again, and have the owner decide in time",
	}
	failApprovalRequired = failure.Entry{
		Literal: "approval_required:<KEY>", Fault: failure.FaultCall,
		Cause: "a step to a sensitive row, for a caller other than the owner, cannot be held for approval",
		Fix:   "call the sensitive row directly, so that the owner can approve it",
	}
	failApprovalID = failure.Entry{
		Literal: "approval:bad_invocation_id", Fault: failure.FaultCall,
		Cause: "the invocation id cannot name an approval, so the owner cannot be asked",
		Fix:   "send a ULID as the invocation id, or none",
	}
	failNotApproved = failure.Entry{
		Literal: "approval:not_granted", Fault: failure.FaultCall,
		Cause: "a re-run whose approval is not granted for its key and body",
		Fix:   "have the owner approve this call first",
	}
)

// Failures is the gate's failure table: every literal a refusal of the gate
// carries, the token's and the breaker's included.
var Failures = append(failure.Table{
	failUnknownKey, failDisabled, failDirectory, failBreakerUnreadable, breaker.Failure,
	failRevocationUnknown, failScope, failContractChanged, failRiskCeiling, failBodyFixed,
	failTokenPayload, failPayload, failSchemaUnusable, failInput, failPendingApproval,
	failApprovalDenied, failApprovalExpired, failApprovalRequired, failApprovalID, failNotApproved,
}, token.Failures...)
