package answer

import "github.com/capdir/capdir/receipt"

// A receipt's shapes are declared in package receipt, which the log's wire types
// name too; they are the same types here.
type (
	Fingerprints       = receipt.Fingerprints
	ReceiptSummary     = receipt.ReceiptSummary
	Receipt            = receipt.Receipt
	FingerprintHMAC    = receipt.FingerprintHMAC
	PublicReceipt      = receipt.PublicReceipt
	PublicFingerprints = receipt.PublicFingerprints
)
