// Package shell parses the command string a shell tool runs (as bash, with
// mvdan.cc/sh/v3) into the facts the policy judges: the simple commands
// and their argv, the operators between them, redirections, substitutions,
// assignments and compound commands. The policy, not this package, decides
// from these facts whether a call is grantable.
package shell
