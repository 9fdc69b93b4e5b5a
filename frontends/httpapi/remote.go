package httpapi

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/labstack/echo/v4"
)

// ParseTrustedProxies reads server.trusted_proxies: CIDRs (10.0.0.0/8)
// or single addresses (192.0.2.7, a /32 or /128).
func ParseTrustedProxies(list []string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, item := range list {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if !strings.Contains(item, "/") {
			addr, err := netip.ParseAddr(item)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q is neither an address nor a CIDR", item)
			}
			item = netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen()).String()
		}
		_, n, err := net.ParseCIDR(item)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is neither an address nor a CIDR", item)
		}
		out = append(out, n)
	}
	return out, nil
}

// remoteExtractor says who sent a request: the socket's peer, unless the
// peer is a trusted proxy, in which case the nearest address in
// X-Forwarded-For that is not a trusted proxy. Echo's own default (no
// extractor) would believe any caller's X-Forwarded-For, and its XFF
// extractor trusts loopback and private networks unless told not to.
func remoteExtractor(trusted []*net.IPNet) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}
