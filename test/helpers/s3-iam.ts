import { CreateAccessKeyCommand, CreateUserCommand, IAMClient, PutUserPolicyCommand } from "@aws-sdk/client-iam";
import { startS3Server, type S3TestServer } from "./s3-server.js";

export interface S3WithUser {
  server: S3TestServer;
  bucket: string;
  /** A user allowed everything under `<bucket>/<allowedPrefix>/` and nothing else ("": the whole bucket, listing included). */
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * moto enforcing IAM: five free requests (the readiness probe, then the bucket, the user, its policy and its key);
 * after that every request's credentials and the user's policy are checked, so wrong ones fail for real.
 */
export async function startS3WithUser(bucketName: string, allowedPrefix = "allowed"): Promise<S3WithUser> {
  const server = await startS3Server({ enforceAuthAfter: 5 });
  const bucket = await server.createBucket(bucketName);
  const iam = new IAMClient({ ...server.settings, credentials: { accessKeyId: "test", secretAccessKey: "test" } });
  await iam.send(new CreateUserCommand({ UserName: "backup" }));
  await iam.send(
    new PutUserPolicyCommand({
      UserName: "backup",
      PolicyName: "only-allowed-prefix",
      PolicyDocument: JSON.stringify({
        Version: "2012-10-17",
        Statement: [{ Effect: "Allow", Action: "s3:*", Resource: allowedPrefix ? [`arn:aws:s3:::${bucket}/${allowedPrefix}/*`] : [`arn:aws:s3:::${bucket}`, `arn:aws:s3:::${bucket}/*`] }],
      }),
    }),
  );
  const key = (await iam.send(new CreateAccessKeyCommand({ UserName: "backup" }))).AccessKey!;
  return { server, bucket, accessKeyId: key.AccessKeyId!, secretAccessKey: key.SecretAccessKey! };
}
