#pragma once
// Framing: how many bytes a message puts on the wire (model-reference.md §1). One definition, used by both
// engines: the packet engine per packet, the flow engine per message (its flows carry wire bytes).
//
// A message of P payload bytes travels as max(1, ceil(P / mtu)) packets (a zero-byte message is one
// header-only packet); each packet carries its payload share plus the per-packet header of the link layer;
// the first packet of an RDMA WRITE (and a READ request) also carries the 16-byte RETH, the last packet of a
// WRITE with immediate the 4-byte immediate data.
#include <algorithm>
#include <cstdint>

namespace ibn::common {

/// InfiniBand per-packet overhead: LRH 8 + BTH 12 + ICRC 4 + VCRC 2.
inline constexpr std::uint32_t kIbHeaderBytes = 26;
/// RoCEv2 per-packet overhead on the wire: Eth 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 + preamble/SFD
/// 8
/// + inter-frame gap 12.
inline constexpr std::uint32_t kRoceV2HeaderBytes = 82;
/// RDMA extended transport header (WRITE's first packet, READ request).
inline constexpr std::uint32_t kRethBytes = 16;
/// Immediate data (last packet of a WRITE with immediate).
inline constexpr std::uint32_t kImmediateBytes = 4;

struct Framing {
  std::uint32_t mtu_bytes = 4096;              ///< path MTU: payload per packet
  std::uint32_t header_bytes = kIbHeaderBytes; ///< per-packet overhead on the wire
  std::uint32_t reth_bytes = kRethBytes;       ///< once per WRITE (first packet)

  /// Packets of a message of `payload` bytes: max(1, ceil(payload / mtu)).
  std::uint64_t packets(std::uint64_t payload) const {
    return payload == 0 ? 1 : (payload + mtu_bytes - 1) / mtu_bytes;
  }
  /// Wire bytes of the request packet that starts `offset` bytes into a message of `payload` bytes.
  /// `reth`: the message's first packet carries a RETH (WRITE, READ request); `immediate`: its last packet
  /// carries immediate data.
  std::uint32_t packet_wire_bytes(std::uint64_t payload, std::uint64_t offset, bool reth,
                                  bool immediate) const {
    const std::uint64_t left = payload - offset;
    auto wire = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, mtu_bytes)) + header_bytes;
    if (offset == 0 && reth) wire += reth_bytes;
    if (left <= mtu_bytes && immediate) wire += kImmediateBytes;
    return wire;
  }
  /// The largest packet: a full MTU with header, RETH and immediate data.
  std::uint32_t max_packet_wire_bytes() const {
    return mtu_bytes + header_bytes + reth_bytes + kImmediateBytes;
  }
  /// Wire bytes of a whole RDMA WRITE of `payload` bytes: payload + one header per packet + one RETH (the sum
  /// of packet_wire_bytes over its packets).
  std::uint64_t write_wire_bytes(std::uint64_t payload) const {
    return payload + packets(payload) * header_bytes + reth_bytes;
  }
  /// Payload share of a full packet, mtu / (mtu + header): the long-message limit of payload / wire.
  double header_efficiency() const {
    return static_cast<double>(mtu_bytes) / static_cast<double>(mtu_bytes + header_bytes);
  }
};

} // namespace ibn::common
