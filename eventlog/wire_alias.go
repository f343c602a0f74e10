package eventlog

import "github.com/capdir/capdir/eventlog/wire"

// Temporary aliases while callers move to package wire.
type (
	Event             = wire.Event
	InvocationRequest = wire.InvocationRequest
	Receipt           = wire.Receipt
	ReceiptSummary    = wire.ReceiptSummary
	Fingerprints      = wire.Fingerprints
)

const (
	TypeDirectoryMutate     = wire.TypeDirectoryMutate
	TypeInvocationRequested = wire.TypeInvocationRequested
	TypeReceipt             = wire.TypeReceipt
	TypeTokenRevoked        = wire.TypeTokenRevoked
	TypeBreakerReset        = wire.TypeBreakerReset
	ControlStream           = wire.ControlStream
	DataStream              = wire.DataStream
	RequestSubjects         = wire.RequestSubjects
	ReceiptSubjects         = wire.ReceiptSubjects
	InvocationPrefix        = wire.InvocationPrefix
)

var (
	Streams              = wire.Streams
	DirectorySubject     = wire.DirectorySubject
	BreakerSubject       = wire.BreakerSubject
	RequestSubject       = wire.RequestSubject
	ReceiptSubject       = wire.ReceiptSubject
	ReceiptNoticeSubject = wire.ReceiptNoticeSubject
	RequestInvocationID  = wire.RequestInvocationID
	Decode               = wire.Decode
	DecodeShared         = wire.DecodeShared
	NewEventAt           = wire.NewEvent
	ErrBadEvent          = wire.ErrBadEvent
)
