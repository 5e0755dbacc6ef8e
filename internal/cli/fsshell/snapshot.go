package fsshell

import "fmt"

// snapshotDir expands the directory argument of a snapshot command: one
// existing directory.
func (c *cmd) snapshotDir(arg string) (*item, error) {
	its, err := c.expand(arg)
	if err != nil {
		return nil, err
	}
	if len(its) != 1 {
		return nil, usagef("%s matches %d paths", arg, len(its))
	}
	it := its[0]
	if !it.exists() {
		return nil, pathErr(it.str, msgNotFound)
	}
	if !it.isDir() {
		return nil, pathErr(it.str, msgNotDir)
	}
	return it, nil
}

// runCreateSnapshot is -createSnapshot <snapshotDir> [<snapshotName>].
func runCreateSnapshot(c *cmd, args []string) error {
	switch {
	case len(args) == 0:
		return usagef("<snapshotDir> is missing.")
	case len(args) > 2:
		return usagef("Too many arguments.")
	}
	it, err := c.snapshotDir(args[0])
	if err != nil {
		return err
	}
	name := ""
	if len(args) == 2 {
		name = args[1]
	}
	p, err := it.fs.CreateSnapshot(c.ctx, it.abs, name)
	if err != nil {
		return err
	}
	fmt.Fprintln(c.env.Stdout, "Created snapshot "+p)
	return nil
}

// runDeleteSnapshot is -deleteSnapshot <snapshotDir> <snapshotName>.
func runDeleteSnapshot(c *cmd, args []string) error {
	if len(args) != 2 {
		return usagef("Incorrect number of arguments.")
	}
	it, err := c.snapshotDir(args[0])
	if err != nil {
		return err
	}
	return it.fs.DeleteSnapshot(c.ctx, it.abs, args[1])
}

// runRenameSnapshot is -renameSnapshot <snapshotDir> <oldName> <newName>.
func runRenameSnapshot(c *cmd, args []string) error {
	if len(args) != 3 {
		return usagef("Incorrect number of arguments.")
	}
	it, err := c.snapshotDir(args[0])
	if err != nil {
		return err
	}
	return it.fs.RenameSnapshot(c.ctx, it.abs, args[1], args[2])
}
