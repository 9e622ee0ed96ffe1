package main

import (
	"fmt"
	"strings"

	"github.com/alecthomas/kong"
)

// HelpCmd prints the help of onboard or of one of its commands, as --help
// does: onboard help keys create is onboard keys create --help.
type HelpCmd struct {
	Command []string `arg:"" optional:"" help:"The command to show help for, such as: keys create." placeholder:"COMMAND"`
}

// Run prints the usage of the command named on stdout; an unknown command
// is a usage error.
func (c *HelpCmd) Run(kctx *kong.Context) error {
	traced, err := kong.Trace(kctx.Kong, c.Command)
	if err != nil {
		return err
	}
	if traced.Error != nil {
		return usageError{fmt.Errorf("help: no command %q (onboard help lists the commands)", strings.Join(c.Command, " "))}
	}
	return traced.PrintUsage(false)
}
