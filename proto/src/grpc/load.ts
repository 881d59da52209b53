import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType } from '../generated/cri.js';

/** Absolute path of cri.proto (the same file from src/ and from dist/). */
export const CRI_PROTO_PATH = fileURLToPath(new URL('../../cri.proto', import.meta.url));

/** Loader options; they must match the `gen` script's flags so the generated types hold. */
export const CRI_LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false, longs: Number, enums: String, defaults: true, oneofs: true,
};

/** gRPC channel options shared by client and server (log and exec chunks can be large). */
export const CRI_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
  'grpc.max_send_message_length': 64 * 1024 * 1024,
};

let cached: ProtoGrpcType | undefined;

/** loadCri loads cri.proto once per process and returns its typed package. */
export function loadCri(): ProtoGrpcType {
  cached ??= grpc.loadPackageDefinition(protoLoader.loadSync(CRI_PROTO_PATH, CRI_LOADER_OPTIONS)) as unknown as ProtoGrpcType;
  return cached;
}

/** unixAddress turns a socket path into a gRPC target ("unix:/abs/path"). */
export function unixAddress(socketPath: string): string {
  return socketPath.startsWith('unix:') ? socketPath : `unix:${socketPath}`;
}
