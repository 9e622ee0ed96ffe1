package main

import (
	"github.com/alecthomas/kong"

	"onboard/completion"
)

// CompletionCmd prints a shell completion script generated from the
// command line's own model, so that it cannot drift from the commands.
type CompletionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"Shell: bash, zsh or fish." placeholder:"SHELL"`
}

// Help explains how to load the script.
func (c *CompletionCmd) Help() string {
	return `Load it in the current shell or install it once:

  bash:  source <(onboard completion bash)
         onboard completion bash > /etc/bash_completion.d/onboard
  zsh:   source <(onboard completion zsh)     (after compinit)
         onboard completion zsh > "${fpath[1]}/_onboard"
  fish:  onboard completion fish > ~/.config/fish/completions/onboard.fish`
}

// Run prints the script for the shell on stdout.
func (c *CompletionCmd) Run(kctx *kong.Context, e *env) error {
	completion.Write(e.stdout, kctx.Model.Node, c.Shell)
	return nil
}
