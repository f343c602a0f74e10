// Package fnrunner runs fn rows: in-process Go functions from a [Registry]. target
// names the function, matched case-insensitively; content (after its # lines) is a
// JSON array template of the arguments, ["$1"] when empty. Built-ins: now, echo,
// last_reply_of ([RegisterBuiltins]); a program embedding capdir registers its own.
//
// # Caveats
//
//   - A Func runs on the worker's goroutine; one that ignores ctx delays its worker.
package fnrunner
