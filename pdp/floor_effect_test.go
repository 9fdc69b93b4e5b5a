package pdp_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolperm/pdp/adapters/paths"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// The deny floor by effect: a new spelling of a known effect — a device
// path written another way, another writer of a device, a sibling of
// mkfs, an abbreviated long option, another multi-call wrapper, find's
// -delete, a system directory — is denied at FULL and in allow-all
// without an entry of its own, and ordinary work stays allowed.
func TestTheFloorByEffect(t *testing.T) {
	ws := newWorkspace(t, "src/")
	// A link in the workspace to a disk: judged by what it names.
	if err := os.Symlink("/dev/sda", filepath.Join(ws, "disk")); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, pdp.Components{Workspace: paths.Resolver{FollowSymlinks: true}})
	denied := []string{
		"dd if=/dev/zero of=//dev/sda", "dd if=/dev/zero of=/dev/./sda", "dd if=/dev/zero of=/dev//sda",
		"dd if=/dev/zero of=/../dev/sda", "echo x > /dev/./sda", "shred /dev/./sda", "wipefs -a //dev/sda",
		"dd if=/dev/zero of=/dev/block/8:0", "dd if=/dev/zero of=/dev/disk/by-id/ata-X", "dd if=/dev/zero of=disk",
		"tee /dev/sda < /dev/zero", "cat /dev/zero | sudo tee /dev/sda", "cp /dev/zero /dev/sda",
		"cat /dev/zero > /dev/nvme0n1", "printf x | dd of=/dev/mapper/root",
		"mke2fs /dev/sdb1", "mkswap /dev/sdb2", "mkdosfs /dev/sdb1", "mkntfs /dev/sdb1", "blkdiscard /dev/sda", "mkfs.ext4 /dev/sdb1",
		"chmod --rec 000 /", "chown --recu nobody /", "chmod -R 777 /etc/", "rm --recursive --forc /",
		"toybox rm -rf /", "busybox rm -rf /",
		"find / -delete", "find / -mindepth 1 -delete", "find /home -delete", "find ~ -delete",
		"rm -rf /home /etc /usr /var /boot", "rm -rf /tmp/../etc/", "rm -rf //usr/", "rm -rf /Users",
		"rm -rf /usr/bin", "rm -rf /var/lib", "rm -rf /USERS", "chgrp -R nobody /etc", "chmod -R 000 /usr/bin",
		"sh -c 'cat img > /dev/sda'", "sudo sh -c 'echo x > /dev/sda'", "eval 'echo x > /dev/sda'", "sh <<< 'echo x > /dev/sda'",
		"dd if=img of=/dev/root", "cat img > /dev/char/1:1", "dd of=/dev/zvol/tank/vol",
	}
	allowed := []string{
		"rm -rf build/", "dd if=/dev/zero of=disk.img bs=1M count=1", "find . -delete", "find . -name '*.o' -delete",
		"chmod -R 755 src", "rm -rf /tmp/x", "rm -rf /home/../tmp", "rm -rf /etc/../tmp/y", "echo ok > /dev/null",
		"cat /dev/sda | head -c 10", "dd if=/dev/sda of=mbr.bin bs=512 count=1", "ls --recursive /", "chmod 644 /tmp/x",
		"rm -rf /usr/local/lib/x", "sh -c 'echo ok > /dev/null'", "bash -c 'make > build.log'",
	}
	for _, s := range []pdp.SessionTree{{PermissionLevel: api.Full}, {Mode: api.AllowAll}} {
		s.Workspace = ws
		for _, cmd := range denied {
			t.Run("denied/"+string(s.PermissionLevel)+string(s.Mode)+"/"+cmd, func(t *testing.T) {
				d := decide(t, e, pdp.Call{Request: api.DecideRequest{SessionID: "s1", Tool: "Bash", Args: map[string]any{"command": cmd}, Cwd: ws}, Session: &s})
				if d.Decision != api.Deny {
					t.Fatalf("got %s/%s (%s), want deny", d.Decision, d.Rule, d.Reason)
				}
			})
		}
		for _, cmd := range allowed {
			t.Run("allowed/"+string(s.PermissionLevel)+string(s.Mode)+"/"+cmd, func(t *testing.T) {
				d := decide(t, e, pdp.Call{Request: api.DecideRequest{SessionID: "s1", Tool: "Bash", Args: map[string]any{"command": cmd}, Cwd: ws}, Session: &s})
				if d.Decision != api.Allow {
					t.Fatalf("got %s/%s (%s), want allow", d.Decision, d.Rule, d.Reason)
				}
			})
		}
	}
}
